import sys

from scenarios.cli.main import main

sys.exit(main())
