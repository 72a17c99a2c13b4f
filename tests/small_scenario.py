"""The small digits scenario (20 clients, 5 per round, FLORAS N = 8, L = 8) that several CLI and run tests write."""


def small_scenario(rounds: int) -> str:
    """TOML text of the small scenario with ``rounds`` rounds (seed 3)."""
    return f"""
[data]
name = "digits"
[partition]
clients = 20
[model]
hidden = [16]
[training]
clients_per_round = 5
lr = 0.1
batch_size = 10
[phy]
scheme = "floras"
L = 8
snr_db = 10.0
[phy.floras]
N = 8
[run]
rounds = {int(rounds)}
seed = 3
"""
