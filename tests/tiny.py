"""The tiny training configuration the trainables tests share (d=8, N=8, a few steps)."""

from trainables import TrainConfig


def tiny_config(**overrides: object) -> TrainConfig:
    """NAP on cases at d=8, N=8, 20 steps with an evaluation every 10; any field can be overridden."""
    base: dict[str, object] = dict(architecture="NAP", task="cases", d_model=8, n_heads=2, seq_len=8,
                                   n_steps=20, eval_every=10, eval_batches=2, case_eval_per_case=10)
    return TrainConfig(**{**base, **overrides})  # type: ignore[arg-type]
