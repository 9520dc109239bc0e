"""The table screen's fixed parts: the header (the hand, the pot, the last hand's trust
and deaths), the seats (in columns at a large table), and the player's card."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Final

from p2pkille.engine.cards import Rank
from p2pkille.engine.machine import Game, Phase
from p2pkille.ui.layout import Line, para
from p2pkille.ui.words import Group, card_name

if TYPE_CHECKING:
    from p2pkille.ui.model import TableScreen

__all__ = ["LOG_ROOM", "card_line", "header", "seats"]

#: The fewest narration lines the table screen keeps room for.
LOG_ROOM: Final = 5


def header(screen: TableScreen, width: int, game: Game) -> list[Line]:
    """The hand under way and the pot; the last hand's trust (verified by whom, or voided)
    and who died in it. On one line where it fits, else wrapped, never cut."""
    node = screen.table.human
    head = f"{screen.t('hand', n=screen.hand_number())}   {screen.t('pot', pot=game.pot)}"
    if not node.outcomes:
        return [[("class:pot", head)]]
    last = node.outcomes[-1]
    if last.voided:
        return [[("class:pot", head), ("", "   "),
                 ("class:warn", screen.t("trust_void", n=last.hand))]]
    seat_of = {name: seat for seat, name in enumerate(node.names)}
    died = Group(tuple(seat_of[p] for p in last.died if p in seat_of))
    count = len(last.holders)
    if sorted(last.agreed_by) == sorted(last.holders):
        trust = screen.t("trust_ok" if count > 2 else "trust_ok_two", n=last.hand,
                         count=count, cp=last.checkpoint[:8])
        style = "class:ok"
    else:
        trust = screen.t("trust_partial", n=last.hand, agreed=len(last.agreed_by),
                         count=count)
        style = "class:warn"
    died_text = screen.say("died", n=last.hand, who=died)
    line: Line = [("class:pot", head), ("", "   "), (style, trust), ("", "   "),
                  ("", died_text)]
    if sum(len(t) for _, t in line) < width:
        return [line]
    return [[("class:pot", head)], *para(style, trust, width),
            *para("", died_text, width)]


def seats(screen: TableScreen, game: Game, names: list[str], waiting: tuple[int, ...],
          step: str | None, width: int, room: int) -> list[Line]:
    """One row a seat; a large table in columns, as many as keep room for the rest of
    the screen (``room`` lines in all)."""
    count = len(names)
    most = max(room - 11 - LOG_ROOM, 6)
    cols = 1 if count <= min(6, most) else max(2, min(math.ceil(count / most),
                                                      max(width // 24, 1)))
    rows = math.ceil(count / cols)
    cell = (width - 1) // cols
    out: list[Line] = []
    for row in range(rows):
        line: Line = []
        for col in range(cols):
            seat = col * rows + row
            if seat >= count:
                break
            turn = step is None and seat in waiting and not game.over
            line += seat_cell(screen, game, seat, turn, names, cell if cols > 1 else 0)
        out.append(line)
    return out

def seat_cell(screen: TableScreen, game: Game, seat: int, turn: bool, names: list[str],
               cell: int) -> Line:
    """One seat: its name, chips, buy-backs, state, dealer and förhand; in ``cell``
    characters (a column of a large table) the short form."""
    pos = game.position_of(seat)
    if not game.in_game[seat]:
        state = screen.t("out")
    elif pos is not None and not game.alive[pos]:
        state = screen.t("dead")
    else:
        state = screen.t("alive")
    alive = state == screen.t("alive")
    style = "class:turnseat" if turn else ("" if alive else "class:deadseat")
    mark = "▶" if turn else " "
    dealer = seat == game.dealer
    forhand = bool(game.order) and game.forhand == seat and game.phase != Phase.DEAL
    if not cell:
        marks = [screen.t("dealer")] * dealer + [screen.t("forhand")] * forhand
        name = screen.seat_label(seat, names)
        chips = screen.t("chips", chips=game.chips[seat])
        bought = screen.t("buybacks", n=game.buybacks[seat])
        return [(style, f"{mark} {name:<16.16} {chips:>10}  {bought:<14} {state:<6} "
                        f"{' '.join(marks)}")]
    flags = ("D" if dealer else " ") + ("F" if forhand else " ")
    name = (screen.t("you").capitalize() if seat == screen.table.human.my_seat
            else names[seat])
    chips = (screen.t("chips", chips=game.chips[seat]) if cell >= 32
             else str(game.chips[seat]))
    room = max(cell - 2 - 1 - len(chips) - 1 - 5 - 1 - 2 - 1, 4)
    return [(style, f"{mark} {name:<{room}.{room}} {chips} {state:<5.5} {flags} ")]



def card_line(screen: TableScreen, game: Game) -> list[Line]:
    """The player's card in a box, with its rank (and a warning for a swapped kille)."""
    node = screen.table.human
    view = node.view
    me = node.my_seat
    if view is None or me is None:
        return []
    label = screen.t("your_card")
    pos = game.position_of(me)
    if pos is None or not game.order:
        return [[("", f"{label}: {screen.t('no_card')}")]]
    rank = view.known.get(game.hold[pos])
    if rank is None:
        return [[("", f"{label}: {screen.t('hidden_card')}")]]
    name = card_name(rank, screen.lang).upper()
    info = screen.t("rank_of", n=int(rank) + 1)
    if rank is Rank.KILLE and game.via_swap[pos]:
        info += "  " + screen.t("swapped_kille")
    return [[("", f"{label}: "), ("class:card", f"│ {name} │"), ("class:rank", "  " + info)]]
