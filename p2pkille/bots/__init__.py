"""Strategies that decide for a seat: the interface and the built-in bots."""

from __future__ import annotations

from p2pkille.bots.base import Strategy
from p2pkille.bots.randombot import RandomBot
from p2pkille.bots.threshold import ThresholdBot

__all__ = ["RandomBot", "Strategy", "ThresholdBot"]
