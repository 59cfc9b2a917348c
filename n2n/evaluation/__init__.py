"""Evaluation: scoring a network on fixed noise, and what is written of it.

Training's periodic evaluation, validate.py and its --follow sidecar share
these modules, so they report the same numbers for the same checkpoint. It
runs the network through the serving path's tiled denoiser (n2n/inference).
"""
