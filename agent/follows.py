"""The turn a follow-up follows, as the model and the check read it (`agent.conversation` makes it)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Follows(BaseModel):
    """The earlier turn a follow-up follows: its question, and the objects its answer rested on."""

    model_config = ConfigDict(frozen=True)
    question: str
    #: The collection and the conditions (as words) of the call the earlier answer rested on; "" unknown.
    collection: str = ""
    where: str = ""
    #: The follow-up asks the earlier question again of other objects ("And what about X?").
    again: bool = False

    def context(self) -> str:
        """What the model reads after the follow-up: the question it follows and what that one found."""
        found = f" Its answer rested on {self.collection} where {self.where}." if self.collection else ""
        return f'(This follows the question "{self.question}".{found})'

    def brief(self) -> str:
        """Which collection the follow-up is about, without the earlier question's words or its conditions:
        all that deciding the collection and whether it holds what is asked needs (`check`); the conditions
        are carried into the call, not decided on (with them the check read 74 new prompt tokens a
        follow-up, 10 over the server's 64-token floor, 2026-11-30)."""
        if not self.collection:
            return self.context()
        return f"(It follows a question on {self.collection}.)"

    def told(self, settled: str = "") -> str:
        """What the tool turn reads: all of `context` for a follow-up that asks the earlier question again;
        for one that does not, nothing when the call's collection is `settled` (named by the check) to the
        one the earlier answer rested on: its conditions are carried into the call
        (`agent.conversation.carry`) and the tool names that collection alone (`typed`), so the model writes
        the follow-up's own part; else the earlier question alone. (Before the tool held the collection, the
        model told nothing twice named another collection with this one's properties, 2026-11-30.)"""
        if self.again:
            return self.context()
        return "" if self.collection and settled == self.collection else Follows(question=self.question).context()
