"""The learners for Satellites (needs PyTorch): shared pieces in `common/`, PPO in `ppo/`.

`satellites_env` never imports this package; the `satellites train` command and
`checkpoint:PATH` agent specs load it lazily.
"""
