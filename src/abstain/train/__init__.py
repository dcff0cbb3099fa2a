"""Training: verifiable SFT data, knowledge-boundary probing data and (with the ``train`` extra) trainers.

Nothing here imports torch or TRL at module import; trainers import them inside their functions.
"""
