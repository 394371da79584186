"""Pure folds from events to read-model rows."""
