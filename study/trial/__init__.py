"""What runs inside a Ray worker for one trial: the entry Ray calls (entry), the adapter around the model family's
``train`` that writes the trial's rows (trainable), where it trains (devices), and its identity (identity: trial key,
code version, machine)."""
