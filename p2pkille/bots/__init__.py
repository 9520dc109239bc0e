"""Strategies that decide for a seat: the interface and the built-in bots.

Choose one by name with :func:`make_bot` (names in :data:`STRATEGIES`).
"""

from __future__ import annotations

from p2pkille.bots.base import Strategy
from p2pkille.bots.randombot import RandomBot
from p2pkille.bots.tableaware import STRATEGIES, TableAwareBot, make_bot
from p2pkille.bots.threshold import ThresholdBot

__all__ = ["STRATEGIES", "RandomBot", "Strategy", "TableAwareBot", "ThresholdBot", "make_bot"]
