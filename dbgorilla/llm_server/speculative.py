"""Speculative decoding from the prompt for `dbgorilla.llm_server` (`--draft_tokens=N`; see its docstring).

Read against llama-cpp-python `READ_AGAINST` (`Llama.generate`'s speculative loop, `Llama.eval`, the
context's `decode`); tests/unit/test_llama_patches.py fails when the installed version moves.
"""

from __future__ import annotations

import sys
from collections import deque
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

#: The llama-cpp-python version whose speculative loop and eval this module was read against.
READ_AGAINST = "0.3.36"
#: Tokens before a reply kept with it in the history (the template's "<|im_start|>assistant\n"), so that
#: the next reply's first tokens find the earlier reply's opening.
LEAD = 3
#: Separates replies in the history: no token has this id, so no n-gram spans two replies.
SEPARATOR = -1


@dataclass
class RecentLookup:
    """A draft model for llama-cpp-python's speculative loop: the `tokens` that followed the latest earlier
    occurrence of the last `ngram` (down to `min_ngram`) tokens, in the prompt or, before it, in the
    server's last `replies` replies. The latest, not the first as llama-cpp-python's prompt lookup takes:
    a call's keys and values recur nearest in the solved examples and the calls before, not in the tool's
    schema at the top. The replies: a reply held to a JSON schema (the check's decision, a verdict) has no
    example in its prompt, and its keys and punctuation are those of the last reply to the same schema."""

    tokens: int = 8
    #: The longest and shortest suffix looked up. Down to one token: after a key's closing quote, the latest
    #: `": "` and what followed it is a better guess than none. On the main job's 40 replies, replayed
    #: offline through the step costs of 2026-11-27 (a batch of 4 costs 1.86 single decodes), 4 down to 1
    #: took 4% fewer decode-costs than 3 down to 2: 545 steps for 1,284 tokens against 634 (2026-11-27).
    ngram: int = 4
    min_ngram: int = 1
    replies: int = 16
    #: The most tokens of a reply's opening drafted in its prompt's batch (`opening`; 0: none).
    opening_tokens: int = 16
    #: After this many drafts in a row of which no token was kept, a reply drafts only after a suffix of
    #: `after` tokens or more, until a draft is kept again (0: never). Prose (the answer's sentence) repeats
    #: short runs of tokens but seldom what followed them: each draft made the step a batch and was thrown
    #: away. On the AVX2 library, prose through the server ran at 0.51-0.58 of the undrafted rate with no such
    #: rule, 0.72-0.77 with two tokens after one or two misses, 0.90 with three and 0.93 with four after one
    #: (docs/results/2026-11-29-warm-eval-and-prose-drafts.md).
    misses: int = 1
    after: int = 4
    #: This reply's last draft (its context's length, its tokens) and the drafts in a row none of which was kept.
    _drafted: tuple[int, int] | None = field(default=None, repr=False)
    _missed: int = field(default=0, repr=False)
    history: deque[Any] = field(default_factory=deque, repr=False)
    #: The last `replies` prompts, each with its reply (`opening`).
    answered: deque[Any] = field(default_factory=deque, repr=False)

    def __call__(self, input_ids: Any, /, **_: Any) -> Any:
        import numpy as np

        length = len(input_ids)
        self._count(length)
        ids = np.asarray(input_ids, dtype=np.int64)
        if self.history:
            ids = np.concatenate([*self.history, ids])
        shortest = self.min_ngram if not self.misses or self._missed < self.misses else max(self.min_ngram, self.after)
        draft = np.array([], dtype=np.intc)
        for size in range(min(self.ngram, len(ids) - 1), shortest - 1, -1):
            windows = np.lib.stride_tricks.sliding_window_view(ids[:-1], size)
            found = np.flatnonzero((windows == ids[-size:]).all(axis=1))
            if len(found):
                start = int(found[-1]) + size
                draft = ids[start : start + self.tokens]
                cut = np.flatnonzero(draft == SEPARATOR)
                draft = draft[: cut[0] if len(cut) else len(draft)].astype(np.intc)
                break
        self._drafted = (length, len(draft))
        return draft

    def begin(self) -> None:
        """A new reply: no draft of it yet."""
        self._drafted, self._missed = None, 0

    def _count(self, length: int) -> None:
        """Whether the last draft was kept, read off how far the context moved since: llama-cpp-python's loop
        asks again after the sampled token and the draft's tokens it kept (`length - 1 - before` of them)."""
        if self._drafted is None:
            return
        before, drafted = self._drafted
        if drafted and before < length <= before + drafted + 1:
            self._missed = self._missed + 1 if length == before + 1 else 0

    def opening(self, prompt: Sequence[int]) -> Any:
        """How the reply to `prompt` likely begins, to draft in the prompt's own batch: what the two latest
        replies to the earlier prompts sharing the longest prefix with this one begin with alike (the first
        `tokens` of one, when only one shares that much; at most `opening_tokens`). A reply to the same
        schema or tools begins with the same keys and punctuation (`{"collection_name": "`), and where the
        replies part is where its first choice is. A token drafted in the prompt's batch costs about a
        seventh of a decode (2026-11-27), so the reply's first choice is sampled from the prompt's batch
        instead of after two or three decodes of its opening."""
        import numpy as np

        if self.opening_tokens <= 0:
            return np.array([], dtype=np.intc)
        ids = np.asarray(prompt, dtype=np.int64)
        longest, replies = 0, []
        for earlier, reply in self.answered:
            shared = shared_prefix(earlier, ids)
            if shared > longest:
                longest, replies = shared, [reply]
            elif shared == longest and longest:
                replies.append(reply)
        if not replies:
            return np.array([], dtype=np.intc)
        if len(replies) == 1:
            return replies[-1][: min(self.tokens, self.opening_tokens)].astype(np.intc)
        latest = replies[-1][: self.opening_tokens]
        return latest[: shared_prefix(latest, replies[-2])].astype(np.intc)

    def answer(self, prompt: Sequence[int], reply: Sequence[int]) -> None:
        """Keep a prompt with its reply for `opening` (a reply of one token, a warming's, has no opening)."""
        import numpy as np

        if self.replies <= 0 or len(reply) < 2:
            return
        self.answered.append((np.asarray(prompt, dtype=np.int64), np.asarray(reply, dtype=np.int64)))
        while len(self.answered) > self.replies:
            self.answered.popleft()

    def remember(self, reply: Sequence[int]) -> None:
        """Keep a reply (with its `LEAD` tokens) for later drafts; the oldest beyond `replies` is dropped."""
        import numpy as np

        if self.replies <= 0 or len(reply) <= LEAD:
            return
        self.history.append(np.array([*reply, SEPARATOR], dtype=np.int64))
        while len(self.history) > self.replies:
            self.history.popleft()


def shared_prefix(evaluated: Sequence[int], prompt: Sequence[int]) -> int:
    """How many leading tokens two token sequences share (of `prompt`, how many are already in the KV
    cache that holds `evaluated`; of two replies, how many they begin with alike)."""
    import numpy as np

    n = min(len(evaluated), len(prompt))
    differ = np.flatnonzero(np.asarray(evaluated[:n]) != np.asarray(prompt[:n]))
    return int(differ[0]) if len(differ) else n


def patch_speculative(llama_class: Any, draft: RecentLookup) -> None:
    """Every model drafts with `draft`; a batch of a sampled token and its draft is decoded with logits at
    each position (the sampler reads them from the context), a prompt the usual way. The prompt's last
    batch also carries the reply's likely opening (`RecentLookup.opening`), with logits at the prompt's
    last token and at each drafted one: the loop samples there as after any draft, and keeps the opening's
    tokens while they are what it samples. The model must keep logits of the last position only
    (`logits_all=False`, as `dbgorilla model up` starts it): llama-cpp-python drafts nothing for a model
    that keeps them all."""
    evaluate, init = llama_class.eval, llama_class.__init__
    generate, complete = llama_class.generate, llama_class.create_completion

    def drafting_init(self: Any, *args: Any, **kwargs: Any) -> None:
        init(self, *args, **kwargs)
        if self.draft_model is None and not self._logits_all:
            self.draft_model = draft

    def decode(self: Any, batch: Sequence[int], logits_from: int) -> None:
        """Evaluate `batch` in one decode, with logits at each position from `logits_from` on."""
        self._ctx.kv_cache_seq_rm(-1, self.n_tokens, -1)
        n_past = self.n_tokens
        self._batch.set_batch(batch=batch, n_past=n_past, logits_all=False)
        for index in range(logits_from, len(batch)):
            self._batch.batch.logits[index] = True
        self._ctx.decode(self._batch)
        self.input_ids[n_past : n_past + len(batch)] = batch
        self.n_tokens += len(batch)
        self._requires_eval = False

    def drafting_eval(self: Any, tokens: Sequence[int]) -> None:
        ends, opening = getattr(self, "_dbgorilla_opening", None) or (-1, ())
        if self.draft_model is draft and len(tokens) and self.n_tokens + len(tokens) == ends:
            self._dbgorilla_opening = None  # the prompt's end: its last batch carries the opening
            opening = [int(t) for t in opening[: max(self._n_ctx - ends, 0)]]
            last = min(len(tokens), self.n_batch - len(opening))
            if opening and last >= 1:
                if len(tokens) > last:
                    evaluate(self, tokens[:-last])
                decode(self, [*tokens[-last:], *opening], last - 1)
                return
        if self.draft_model is not draft or not 1 < len(tokens) <= draft.tokens + 1:
            evaluate(self, tokens)
            return
        decode(self, tokens, 0)

    def noting_complete(self: Any, *args: Any, **kwargs: Any) -> Any:
        self._dbgorilla_one_token = kwargs.get("max_tokens") == 1  # a warming: nothing to draft
        return complete(self, *args, **kwargs)

    def remembering_generate(self: Any, tokens: Sequence[int], *args: Any, **kwargs: Any) -> Iterator[int]:
        start = max(len(tokens) - LEAD, 0)
        written: list[int] = []
        draft.begin()
        if self.draft_model is draft and not getattr(self, "_dbgorilla_one_token", False):
            opening = draft.opening(tokens)
            self._dbgorilla_opening = (len(tokens), opening) if len(opening) else None
        try:
            for token in generate(self, tokens, *args, **kwargs):
                written.append(int(token))
                yield token
        finally:  # also when the caller stops at a stop word or max_tokens (the generator is closed)
            self._dbgorilla_opening = None
            if self.draft_model is draft and written:
                draft.remember([int(t) for t in tokens[start:]] + written)
                draft.answer(tokens, written)

    llama_class.__init__, llama_class.eval = drafting_init, drafting_eval
    llama_class.generate, llama_class.create_completion = remembering_generate, noting_complete


LOGITS_ALL = "--logits_all"
DRAFT_TOKENS = "--draft_tokens="
#: `--draft_ngram=MIN:MAX`: the suffix lengths looked up (default: `RecentLookup`'s), for side-by-side runs.
DRAFT_NGRAM = "--draft_ngram="
#: `--draft_opening=N`: the most tokens of a reply's opening drafted in its prompt's batch (0: none).
DRAFT_OPENING = "--draft_opening="
#: `--draft_misses=N[:K]`: drafts in a row none of whose tokens was kept before a reply drafts only after K
#: tokens found again (0: never).
DRAFT_MISSES = "--draft_misses="


def drafting(argv: list[str]) -> tuple[RecentLookup | None, list[str]]:
    """The draft `--draft_tokens=N` (and `--draft_ngram=MIN:MAX`, `--draft_opening=N`) ask for (None: none,
    or 0 tokens), and the server's own arguments: these taken out, `logits_all` off unless asked on
    (`drafting_argv`)."""
    asked = {
        name: [a.split("=", 1)[1] for a in argv if a.startswith(name)]
        for name in (DRAFT_TOKENS, DRAFT_NGRAM, DRAFT_OPENING, DRAFT_MISSES)
    }
    rest = [a for a in argv if not a.startswith(tuple(asked))]
    tokens, ngram, opening = asked[DRAFT_TOKENS], asked[DRAFT_NGRAM], asked[DRAFT_OPENING]
    if not tokens or int(tokens[-1]) <= 0:
        return None, rest
    lookup = RecentLookup(tokens=int(tokens[-1]))
    if ngram:
        low, _, high = ngram[-1].partition(":")
        try:
            lookup.min_ngram, lookup.ngram = int(low), int(high or low)
        except ValueError:
            lookup.min_ngram = 0  # not whole numbers: refused below, with the same message
        if not 1 <= lookup.min_ngram <= lookup.ngram:
            raise SystemExit(f"{DRAFT_NGRAM}{ngram[-1]}: expected the shortest suffix, then the longest (1:4)")
    if opening:
        if not opening[-1].isdigit():
            raise SystemExit(f"{DRAFT_OPENING}{opening[-1]}: expected a whole number of tokens (0: none)")
        lookup.opening_tokens = int(opening[-1])
    if misses := asked[DRAFT_MISSES]:
        count, colon, after = misses[-1].partition(":")
        if not count.isdigit() or (colon and not (after.isdigit() and int(after) >= 1)):
            raise SystemExit(f"{DRAFT_MISSES}{misses[-1]}: expected whole numbers of drafts and tokens (2:3; 0: never)")
        lookup.misses, lookup.after = int(count), int(after) if colon else lookup.after
    return lookup, drafting_argv(rest)


def drafting_argv(argv: list[str]) -> list[str]:
    """The server's arguments for a drafting model: `logits_all` off unless asked on, which is said, as
    llama-cpp-python's loop then checks no draft (its server's default is on)."""
    asked = [  # `--logits_all=X` or `--logits_all X`
        a.split("=", 1)[1] if "=" in a else (argv[i + 1] if i + 1 < len(argv) else "")
        for i, a in enumerate(argv)
        if a.split("=", 1)[0] == LOGITS_ALL
    ]
    if not asked:
        return [*argv, f"{LOGITS_ALL}=False"]
    if asked[-1].strip().lower() not in ("false", "0", "no", "off"):
        print(
            f"dbgorilla.llm_server: {LOGITS_ALL}={asked[-1]} keeps every position's logits: no draft is checked",
            file=sys.stderr,
        )
    return argv
