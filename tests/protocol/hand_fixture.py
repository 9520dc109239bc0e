"""A complete, honest shuffled hand built from a seed, shared by the crypto tests."""

from __future__ import annotations

from dataclasses import dataclass

from protocol.deck import (
    Ciphertext,
    Deck,
    ShuffleContext,
    ShuffleStep,
    ShuffleWitness,
    initial_deck,
    shuffle_step,
)
from protocol.keys import HandContext, JointKey, KeyShare, PublicKeyShare, joint_key
from protocol.rng import DeterministicRng


@dataclass
class Hand:
    ctx: HandContext
    deck: Deck
    keys: list[KeyShare]
    announcements: list[PublicKeyShare]
    joint: JointKey
    steps: list[ShuffleStep]
    witnesses: list[ShuffleWitness]
    rng: DeterministicRng

    @property
    def final(self) -> tuple[Ciphertext, ...]:
        return self.steps[-1].deck

    def expected_cards(self) -> list[int]:
        """Card index at each final slot, tracked through the permutations."""
        order = list(range(len(self.deck)))
        for w in self.witnesses:
            order = [order[j] for j in w.permutation]
        return order


def make_deck(cards: int) -> Deck:
    return Deck(tuple(f"card-{i:02d}" for i in range(cards)))


def play_hand(seats: int = 3, cards: int = 8, seed: bytes = b"hand", hand: int = 7) -> Hand:
    rng = DeterministicRng(seed)
    ctx = HandContext(b"table-1", hand)
    deck = make_deck(cards)
    keys = [KeyShare.generate(i, rng) for i in range(seats)]
    announcements = [k.announce(ctx, rng) for k in keys]
    joint = joint_key(ctx, announcements)
    current = initial_deck(deck, joint.public)
    steps, witnesses = [], []
    for seat in range(seats):
        step, witness = shuffle_step(current, joint.public, ShuffleContext(ctx, seat, seat), rng)
        steps.append(step)
        witnesses.append(witness)
        current = step.deck
    return Hand(ctx, deck, keys, announcements, joint, steps, witnesses, rng)
