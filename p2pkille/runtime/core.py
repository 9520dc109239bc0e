"""One table node's machine: every concern's part, wired, and the loop that drives them.

The node consumes each author's accepted envelopes in chain order, an envelope only when
the table is ready for it (readiness.py, consume.py), and between envelopes makes its own
moves (:meth:`Core.act`) in a fixed order: late answers, the genesis, ``over``, a late
step taken back, a seen, then the stopped hand's round or the stage's move. Votes and
accusations are read ahead and weighed after every step (verdict.py): they can stop the
hand. All secret randomness comes from the member's seed per purpose and context, so a
node that replays its log derives the same secrets.

=================  ============================================================
part               concern
=================  ============================================================
``table``          state.py: what every part reads (seats, chains, game, stage)
``outbox``         emit.py: this member's own envelopes, each once
``intake``         intake.py: the transcript's input; forks
``genesis``        genesis.py: commits, nonces, accepts
``dealing``        dealing.py: keys, shuffle, deal
``custody``        custody.py: shares held, boxes sealed, forwards owed
``play``           play.py: the game's facts; my moves in play
``claims``         claims.py: claims that hide a card; strict proofs
``closing``        closing.py: reveals, audit, checkpoint, counting a hand
``timeouts``       timeouts.py: votes, seens, silent sets, defaults
``late``           late.py: answers to votes on decided hands
``accusations``    accusations.py: faults found, accuses
``evidence``       evidence.py: judging an accusation (read only)
``verdict``        verdict.py: the verdict of a voided hand, and the hand voided
``rewinder``       rewind.py: rewinds and rebuilds
``readiness``      readiness.py: when an envelope may be consumed
``consumer``       consume.py: the handler map, and faults of bad envelopes
=================  ============================================================
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from p2pkille.engine.view import Decider
from p2pkille.runtime import messages as msg
from p2pkille.runtime.accusations import Accusations
from p2pkille.runtime.agreeing import Agreeing
from p2pkille.runtime.behaviour import HONEST, Behaviour, Probe
from p2pkille.runtime.claims import Claims
from p2pkille.runtime.closing import Closing
from p2pkille.runtime.config import TableConfig
from p2pkille.runtime.consume import Consumer
from p2pkille.runtime.custody import Custody
from p2pkille.runtime.dealing import Dealing
from p2pkille.runtime.emit import Outbox
from p2pkille.runtime.evidence import Evidence
from p2pkille.runtime.genesis import Genesis
from p2pkille.runtime.intake import Intake
from p2pkille.runtime.io import Output
from p2pkille.runtime.late import LateAnswers
from p2pkille.runtime.outcome import Timing
from p2pkille.runtime.play import Play
from p2pkille.runtime.readiness import Readiness
from p2pkille.runtime.records import Hand
from p2pkille.runtime.rewind import Rewinder
from p2pkille.runtime.state import TableState
from p2pkille.runtime.steps import Stage
from p2pkille.runtime.timeouts import Timeouts
from p2pkille.runtime.verdict import Verdict
from protocol.envelope import Envelope
from protocol.identity import Identity
from protocol.keys import DeliveryKeyPair

if TYPE_CHECKING:
    from p2pkille.runtime.node import TableNode

__all__ = ["Core"]


class Core:
    """The parts of one node's machine (see the module doc)."""

    def __init__(self, node: TableNode, identity: Identity, delivery: DeliveryKeyPair,
                 config: TableConfig, decider: Decider, seed: bytes, timing: Timing) -> None:
        self.node = node
        """The node's face, handed to the behaviour's hooks."""
        self.table = TableState(identity, delivery, config, decider, seed, timing)
        self.behaviour: Behaviour = HONEST
        self.probe: Probe | None = None
        self.signed_kinds: list[str] = []
        """The kinds the current move signed (kept while a probe is set)."""
        self.outbox = Outbox(self)
        self.intake = Intake(self)
        self.genesis = Genesis(self)
        self.dealing = Dealing(self)
        self.custody = Custody(self)
        self.play = Play(self)
        self.claims = Claims(self)
        self.closing = Closing(self)
        self.timeouts = Timeouts(self)
        self.late = LateAnswers(self)
        self.accusations = Accusations(self)
        self.evidence = Evidence(self)
        self.verdict = Verdict(self)
        self.agreeing = Agreeing(self)
        self.rewinder = Rewinder(self)
        self.readiness = Readiness(self)
        self.consumer = Consumer(self)

    def replay(self, log: Iterable[bytes]) -> None:
        """Before the start: take back every envelope this node had accepted (its own
        included), e.g. from its log after a crash. Its own are then not sent again: as
        all its secrets come from the seed, it re-derives each of them byte for byte and
        the outbox finds it already in the chain."""
        for wire in log:
            self.intake.accept(bytes(wire))
        self.outbox.replay(self.table.transcript.chain(self.table.identity.public))

    def pump(self, out: list[Output]) -> None:
        """Consume every envelope that is ready, and make my moves, until neither is left."""
        table, verdict = self.table, self.verdict
        while True:
            progressed = False
            for m, member in enumerate(table.members):
                while True:
                    verdict.update()  # votes and accusations first: they can stop the hand
                    env = table.transcript.get(member, table.consumed[m] + 1)
                    if env is None or not self.readiness.ready(m, env):
                        break
                    table.consumed[m] += 1
                    hand = table.hand
                    if (hand is not None and table.view is not None and m != table.me
                            and table.stage >= Stage.PLAY):  # a rewind goes back into play
                        self.play.consumed(hand, m, env.seq)
                    self._consume(m, env)
                    verdict.update()
                    progressed = True
            if not progressed and not self._move(out):
                return

    def _consume(self, m: int, env: Envelope) -> None:
        if self.probe is None:
            self.consumer.consume(m, env)
            return
        self.probe.start()
        self.consumer.consume(m, env)
        self.probe.consumed(env.kind)

    def _move(self, out: list[Output]) -> bool:
        if self.probe is None:
            return self.act(out)
        self.signed_kinds.clear()
        self.probe.start()
        made = self.act(out)
        self.probe.moved(tuple(self.signed_kinds))
        return made

    # One return per kind of move, tried in priority order.
    def act(self, out: list[Output]) -> bool:  # noqa: PLR0911
        """Make my next move, if I have one; False if none."""
        if self._behaviour_moves(out):
            return True
        if self.late.act(out) or self.agreeing.act(out):
            return True
        stage = self.table.stage
        if stage < Stage.KEYS:
            return self.genesis.act(out)
        if self.closing.say_over(out):
            return True
        hand = self.table.hand
        if hand is None or stage == Stage.DONE:
            return False
        if self.play.mark_rewound(out, hand) or self.timeouts.answer(out, hand):
            return True
        if hand.void.stopping:
            return self.play.leave_when_over(hand) or self.accusations.act(out, hand)
        if stage == Stage.PLAY:
            return self.play.act(out, hand)
        return self._step(out, hand)

    def _behaviour_moves(self, out: list[Output]) -> bool:
        """The envelopes my behaviour makes up before my own move; an accuse among them
        is my accuse of its hand (none if I made mine)."""
        sent = False
        for kind, body in self.behaviour.move(self.node):
            number = body.get("hand")
            if kind == msg.ACCUSE and not self.outbox.once("accuse", number):
                continue
            self.outbox.send(out, kind, body)
            sent = True
        return sent

    def _step(self, out: list[Output], hand: Hand) -> bool:
        """My key, shuffle step, deal, close or signature: once per stage of a hand."""
        stage = self.table.stage
        if stage == Stage.SHUFFLE and hand.deck.unchecked and hand.me == len(hand.deck.steps):
            self.dealing.check_steps(hand)  # before I build on them
            return True
        if hand.me is None or not self.outbox.once(stage, hand.number):
            return False
        if stage in (Stage.KEYS, Stage.SHUFFLE, Stage.DEAL):
            return self.dealing.act(out, hand)
        return self.closing.act(out, hand)

    def flush(self, out: list[Output]) -> None:
        self.outbox.flush(out)
