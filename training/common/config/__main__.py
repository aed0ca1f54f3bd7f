"""`python -m training.common.config`: print the config reference (docs/configs.md)."""

from training.common.config.reference import reference

print(reference())
