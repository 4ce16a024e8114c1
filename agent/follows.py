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
        """Which objects the follow-up is about, without the earlier question's words: what deciding the
        collection and whether it holds what is asked needs (`check`), in a third of the tokens."""
        if not self.collection:
            return self.context()
        return f"(It follows a question on {self.collection} where {self.where}.)"

    def told(self) -> str:
        """What the tool turn reads: the earlier question alone, for a follow-up that does not ask it again
        (the earlier conditions are carried into its call, `agent.conversation.carry`, so the model writes
        the follow-up's own part; ~10 new prompt tokens less a follow-up, 2026-11-30); all of `context` for
        one that does."""
        return self.context() if self.again else Follows(question=self.question).context()
