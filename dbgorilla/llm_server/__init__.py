"""llama-cpp-python's OpenAI-compatible server, telling each reply how many prompt tokens it reused.

On 2 CPU cores every prompt token the server evaluates costs ~70 ms, and one it reuses from the
KV cache (the prefix the last request shared, or a state from the prompt cache) costs nothing, so
time per question is set by the new tokens. llama-cpp-python reuses them but never says how many;
this wrapper reports them where OpenAI does, `usage.prompt_tokens_details.cached_tokens`, so
`dbgorilla eval` can count new tokens per question with any endpoint that reports them.

It also keeps KV states of prompt prefixes (`PrefixStore`): when a request shares little with
what the model last evaluated (another use case's tools, or a new run), the stored state with the
longest shared prefix is loaded instead of evaluating it again. What is stored is the system turn
alone (its tools, the collections listing), cut where the first message after it starts
(`system_end`): every later question on the same tools starts with it. A warming (a one-token
request, `AgentSession.warm`) is stored whole instead, so the fixed start of its user turn (the solved
examples' header) is kept with the tools. Storing whole first prompts
instead kept a state per question (its solved examples and its words), 16 of which pushed the
tool prefixes out within five questions: 1,700 of a question's 1,800 new tokens were a system turn
evaluated again (2026-11-26). llama_cpp's own `--cache` does not
serve here: each save pickles the whole logits buffer (~300 MB for this vocabulary) and a hit
removes the entry it used.

A call forced by name, and a reply held to a JSON schema, are sampled under a grammar. llama.cpp's
sampler chain checks the grammar against every one of the vocabulary's 151,936 tokens before it
picks one; `greedy_grammar_token` checks only the 64 best tokens first (the whole vocabulary only
when it rejects them all), as llama.cpp's own server checks its sampled token first. Greedy
decoding picks the same token either way.

Most of what the agent generates is JSON whose keys, property names and values are in the prompt
(the tool's schema, the solved examples) or in the replies before (the check's decision has the keys
and punctuation of the last decision). `RecentLookup` drafts the tokens that followed the latest
earlier occurrence of the last few tokens, and llama-cpp-python's own speculative loop checks them:
the draft is evaluated in one batch (`patch_speculative`: with logits at every position, read from
the context, never copied into llama-cpp-python's per-position buffer, which needs `logits_all`
and a 5 GB array for this vocabulary), each position is sampled as usual, and tokens are kept while
they are the draft's. That loop runs only for a model started with `logits_all` off, which llama-cpp-
python's server turns on by default: until 2026-11-27 no draft was checked, and the measurements that
left drafting off measured nothing. `dbgorilla model up` now starts it off and drafts 3 tokens: the
main job's requests replayed side by side took 0.79 of the time (docs/results/2026-11-27-drafts-checked.md).
A reply's likely opening (`RecentLookup.opening`) is drafted in its prompt's last batch. A reply whose
last draft was thrown away whole drafts again only after four tokens found before (`RecentLookup.misses`):
prose drafted from one-token suffixes ran at half the undrafted rate.

Run as `python -m dbgorilla.llm_server [--prompt_cache_dir=DIR] [--canonical=1] [--draft_tokens=N]
[--draft_ngram=MIN:MAX] [--draft_opening=K] [--draft_misses=M:L] <llama_cpp.server arguments>`: DIR keeps the
prefix states across restarts (in memory only without it; a canonical server's states in a folder of their
own, `ModelService.prompt_cache_dir`); `--canonical=1` evaluates every prompt in canonical batches, so a
request's reply does not depend on what was evaluated before it (`dbgorilla.llm_server.canonical`; drafts
then come from the prompt alone, no opening); N tokens are drafted per step (0: none), after the longest
suffix of MAX down to MIN tokens found before, up to K of a reply's opening with its prompt (16; 0: none), and
after M drafts in a row thrown away only after L tokens found (1:4; 0: no such rule)."""

from __future__ import annotations

import hashlib
import json
import sys
import threading
from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent.llama_cpu import load_cpu_backend
from agent.tooldef import prefix_order
from dbgorilla.llm_server import canonical
from dbgorilla.llm_server.forms import COMPLETIONS_PATH, JsonSchemaForm
from dbgorilla.llm_server.grammar import patch_compact_calls, patch_compact_listing, patch_grammar_sampling
from dbgorilla.llm_server.speculative import drafting, patch_speculative, shared_prefix

#: The llama-cpp-python version whose `generate`, `create_chat_completion` and state saving `patch_llama`
#: was read against (tests/unit/test_llama_patches.py).
READ_AGAINST = "0.3.36"
#: completion id -> prompt tokens reused, filled by the patched model and read by the middleware.
_REUSED: dict[str, int] = {}
_LOCK = threading.Lock()
_LOCAL = threading.local()
PROMPT_CACHE_DIR = "--prompt_cache_dir="
#: Prefix states a server keeps (least recently used forgotten first): for the default model ~40 MB a
#: tool turn's system turn, ~3 MB a verdict's prompt. The default strategy opens 35 prefixes on the five
#: use cases (per use case the check's listing, and per collection its verdict and its tool turn).
STORE_CAPACITY = 48


@dataclass
class PrefixStore:
    """KV states of distinct prompt prefixes, in memory and (with a folder) on disk; the least recently
    used is forgotten first.

    A question's first turn stores the state of its system turn (the tools) when `min_system_new` of
    its tokens are in no stored state, or, where there is no system turn of `min_system` tokens to cut
    at, of its whole prompt when `min_new` are; later questions of the same prefix, and later turns,
    add nothing. A warming stores its whole prompt when `min_opening_new` are. Each state is llama.cpp's
    own (about 30 KB a token for the default model)."""

    folder: Path | None = None
    capacity: int = STORE_CAPACITY
    #: Load a stored state only when it saves at least this many tokens over the current KV.
    min_gain: int = 32
    #: Store a question's first prompt only when this many of its tokens are in no stored state.
    min_new: int = 200
    #: A system turn this long is a prefix of its own (the tools); a shorter one (a template's default
    #: line before a prompt that carries its own instructions) is not, and whole first prompts are stored.
    min_system: int = 200
    #: Store a system turn when this many of its tokens are in no stored state.
    min_system_new: int = 64
    #: Store a one-token request's whole first prompt (a warming: `AgentSession.warm` sends each opening
    #: for one token) when this many of its tokens are in no stored state. A warming says which short
    #: prefix its questions share (the check's verdict on one collection: ~80 tokens before the question);
    #: a question's own first prompt that short is never stored, so questions do not push prefixes out.
    #: A tool turn's warming adds its user turn's fixed start to its system turn: ~20 tokens.
    min_opening_new: int = 16
    _keys: dict[str, tuple[int, ...]] = field(default_factory=dict)
    _memory: dict[str, bytes] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.folder is None:
            return
        self.folder.mkdir(parents=True, exist_ok=True)
        for path in sorted(self.folder.glob("*.tokens"), key=lambda p: p.stat().st_mtime):
            state = path.with_suffix(".state")
            if state.exists():
                self._keys[path.stem] = tuple(json.loads(path.read_text()))

    def best(self, prompt: Sequence[int]) -> tuple[str | None, int]:
        """The stored state sharing the longest prefix with `prompt`, and that length."""
        found, length = None, 0
        for name, key in self._keys.items():
            shared = shared_prefix(key, prompt)
            if shared > length:
                found, length = name, shared
        return found, length

    def tokens(self, name: str) -> tuple[int, ...]:
        return self._keys[name]

    def touch(self, name: str) -> None:
        """A state just used is the last to be forgotten (least recently used first, on disk too)."""
        if name in self._keys:
            self._keys[name] = self._keys.pop(name)
            if self.folder is not None:
                (self.folder / f"{name}.tokens").touch(exist_ok=True)

    def wants(self, prompt: Sequence[int], opening: bool = False) -> bool:
        """Whether a first prompt with no system turn to cut at is kept whole (`opening`: a warming)."""
        return len(prompt) - self.best(prompt)[1] >= (self.min_opening_new if opening else self.min_new)

    def put(self, tokens: Sequence[int], state: bytes) -> None:
        tokens = [int(token) for token in tokens]  # llama_cpp's are numpy int32
        name = hashlib.sha256(json.dumps(tokens).encode()).hexdigest()[:24]
        self._keys[name] = tuple(tokens)
        if self.folder is None:
            self._memory[name] = state
        else:
            # The state first, the tokens last, each whole or not at all: a reader lists the tokens.
            _write_whole(self.folder / f"{name}.state", state)
            _write_whole(self.folder / f"{name}.tokens", json.dumps(tokens).encode())
        for other, key in list(self._keys.items()):  # a prefix of it: whatever it served, this serves
            if other != name and len(key) < len(tokens) and tuple(tokens[: len(key)]) == key:
                self.forget(other)
        while len(self._keys) > self.capacity:
            self.forget(next(iter(self._keys)))

    def get(self, name: str) -> bytes | None:
        if self.folder is None:
            return self._memory.get(name)
        try:
            return (self.folder / f"{name}.state").read_bytes()
        except OSError:
            self.forget(name)
            return None

    def forget(self, name: str) -> None:
        self._keys.pop(name, None)
        self._memory.pop(name, None)
        if self.folder is not None:
            for suffix in (".state", ".tokens"):
                (self.folder / f"{name}{suffix}").unlink(missing_ok=True)


def system_end(prompt: Sequence[int], marker: int | None) -> int | None:
    """Where the system turn ends: the second message-start `marker` token (ChatML's `<|im_start|>`), or
    None for a template without one or a prompt of one message."""
    if marker is None:
        return None
    starts = [index for index, token in enumerate(prompt) if token == marker]
    return starts[1] if len(starts) >= 2 else None


def _message_marker(llama: Any) -> int | None:
    """The chat template's message-start token (one special token), or None."""
    if not hasattr(llama, "_dbgorilla_marker"):
        try:
            tokens = llama.tokenize(b"<|im_start|>", add_bos=False, special=True)
        except Exception:  # a tokenizer without special tokens: whole prompts are stored
            tokens = []
        llama._dbgorilla_marker = tokens[0] if len(tokens) == 1 else None
    return llama._dbgorilla_marker


def _keep(store: PrefixStore, tokens: Sequence[int], llama: Any) -> None:
    """Store the model's current KV state under `tokens`; a state not kept (a full disk) costs time
    later, never the reply."""
    try:
        store.put(tokens, _save(llama))
    except Exception as error:
        print(f"dbgorilla.llm_server: prefix state not stored: {error!r}", file=sys.stderr)


def _write_whole(path: Path, data: bytes) -> None:
    partial = path.with_suffix(path.suffix + ".partial")
    partial.write_bytes(data)
    partial.replace(path)


def _load(llama: Any, tokens: tuple[int, ...], state: bytes) -> bool:
    """Put a stored KV state into the model, as llama_cpp's own `load_state` does without logits."""
    import ctypes

    import llama_cpp

    buffer = (ctypes.c_uint8 * len(state)).from_buffer_copy(state)
    if llama_cpp.llama_state_set_data(llama._ctx.ctx, buffer, len(state)) != len(state):
        llama.reset()
        return False
    llama.input_ids[: len(tokens)] = tokens
    llama.n_tokens = len(tokens)
    llama._requires_eval = True  # the next decode replays a token for fresh logits
    return True


def _save(llama: Any) -> bytes:
    import ctypes

    import llama_cpp

    size = llama_cpp.llama_state_get_size(llama._ctx.ctx)
    buffer = (ctypes.c_uint8 * int(size))()
    written = llama_cpp.llama_state_get_data(llama._ctx.ctx, buffer, size)
    return bytes(buffer[: int(written)])


def patch_llama(llama_class: Any, store: PrefixStore | None = None, canon: bool = False) -> None:
    """Record, per chat completion, the prompt prefix the model found already evaluated; with a
    store, load the best stored prefix first and store new ones after; with `canon`, evaluate every
    prompt in canonical batches (`dbgorilla.llm_server.canonical`)."""
    generate, chat = llama_class.generate, llama_class.create_chat_completion

    def counting_generate(self: Any, tokens: Sequence[int], *args: Any, **kwargs: Any) -> Iterator[int]:
        prompt = list(tokens)
        reused = shared_prefix(self._input_ids[: self.n_tokens], prompt)
        if canon:
            reused = min(reused, canonical.upto(self))
        stored = 0
        if store is not None:
            name, stored = store.best(prompt)
            state = store.get(name) if name is not None and stored >= reused + store.min_gain else None
            if name is not None and state is None and stored >= reused + store.min_gain:
                stored = 0  # chosen but unreadable (the store forgot it): it covers nothing
            if name is not None and state is not None:
                loaded = _load(self, store.tokens(name), state)
                reused = stored if loaded else 0  # a failed load leaves the model reset
                canonical.mark(self, reused if canon else 0)  # a canonical server stores canonical states only
                if not loaded:  # written by another build, or cut short: never try it again
                    store.forget(name)
                    stored = 0  # it covers nothing now
                else:
                    store.touch(name)
        _LOCAL.system_end, evaluated = None, 0
        if store is not None and getattr(_LOCAL, "first_turn", False) and not getattr(_LOCAL, "opening", False):
            end = system_end(prompt, _message_marker(self))
            end = _LOCAL.system_end = end if end is not None and end >= store.min_system else None
            # a stored state shares min(stored, end) of the system turn: the store is not searched again
            if end is not None and end - max(reused, min(stored, end)) >= store.min_system_new:
                # the system turn first, alone, and its state kept; the rest of the prompt follows as usual
                if canon:
                    canonical.evaluate(self, prompt, reused, end)
                else:
                    self.n_tokens = reused
                    self.eval(prompt[reused:end])
                _keep(store, prompt[:end], self)
                evaluated = end
        if canon:
            reused = min(reused, canonical.prepare(self, prompt, max(reused, evaluated)))
        _LOCAL.reused, _LOCAL.prompt = min(reused, max(len(prompt) - 1, 0)), prompt
        yield from generate(self, tokens, *args, **kwargs)  # closed early at a stop: nothing after runs

    def counting_chat(self: Any, *args: Any, **kwargs: Any) -> Any:
        _LOCAL.reused = 0
        messages = kwargs.get("messages", args[0] if args else [])
        _LOCAL.first_turn = not any(isinstance(m, dict) and m.get("role") in ("assistant", "tool") for m in messages)
        if kwargs.get("tools"):
            kwargs["tools"] = [shared_first(tool) for tool in kwargs["tools"]]
        if "messages" in kwargs:
            kwargs["messages"] = [with_object_arguments(m) for m in messages]
        # A warming (`AgentSession.warm`) is kept whole, its user turn's fixed start (the examples' header) too.
        _LOCAL.opening = opening = kwargs.get("max_tokens") == 1
        _LOCAL.prompt, _LOCAL.system_end = [], None
        result = chat(self, *args, **kwargs)
        whole = _LOCAL.first_turn and getattr(_LOCAL, "system_end", None) is None  # a warming, or no system turn
        if store is not None and whole and _LOCAL.prompt and store.wants(_LOCAL.prompt, opening):
            if canon:  # only what a later prompt computes the same way: not the reply's token
                canonical.truncate(self)
            _keep(store, self._input_ids[: self.n_tokens], self)
        if isinstance(result, dict) and "id" in result:
            with _LOCK:
                _REUSED[result["id"]] = _LOCAL.reused
        return result

    llama_class.generate, llama_class.create_chat_completion = counting_generate, counting_chat


def with_object_arguments(message: Any) -> Any:
    """An assistant message whose tool calls carry their arguments as the JSON object, not the
    string OpenAI's API sends. Chat templates such as Qwen2.5's render `arguments | tojson`: given
    the string they show the model its own call as one escaped string, not as the call it made."""
    if not isinstance(message, dict) or not message.get("tool_calls"):
        return message
    calls = []
    for call in message["tool_calls"]:
        function = call.get("function") if isinstance(call, dict) else None
        if isinstance(function, dict) and isinstance(function.get("arguments"), str):
            try:
                parsed = json.loads(function["arguments"])
            except ValueError:
                parsed = None
            if isinstance(parsed, dict):
                call = {**call, "function": {**function, "arguments": parsed}}
        calls.append(call)
    return {**message, "tool_calls": calls}


def shared_first(tool: dict[str, Any]) -> dict[str, Any]:
    """The tool with its function's keys in `prefix_order` again: the server's request model puts the
    description first whatever order the client sent."""
    function = tool.get("function")
    if not isinstance(function, dict):
        return tool
    return {**tool, "function": prefix_order(function)}


def with_cached_tokens(body: bytes) -> bytes:
    """The reply with `usage.prompt_tokens_details.cached_tokens` added (unchanged if not a completion)."""
    try:
        payload = json.loads(body)
    except ValueError:
        return body
    if not isinstance(payload, dict) or not isinstance(payload.get("usage"), dict):
        return body
    with _LOCK:
        reused = _REUSED.pop(str(payload.get("id")), None)
    if reused is None:
        return body
    payload["usage"]["prompt_tokens_details"] = {"cached_tokens": reused}
    return json.dumps(payload).encode()


def add_middleware(app: Any) -> Any:
    from starlette.requests import Request
    from starlette.responses import Response

    @app.middleware("http")
    async def cached_tokens(request: Request, call_next: Callable[[Request], Awaitable[Any]]) -> Any:
        response = await call_next(request)
        if request.url.path != COMPLETIONS_PATH or "json" not in response.headers.get("content-type", ""):
            return response
        body = b"".join([chunk async for chunk in response.body_iterator])
        headers = {k: v for k, v in response.headers.items() if k.lower() != "content-length"}
        return Response(with_cached_tokens(body), status_code=response.status_code, headers=headers)

    app.add_middleware(JsonSchemaForm)
    return app


def main() -> None:
    backend = load_cpu_backend()
    print(f"llama.cpp CPU library: {backend}", file=sys.stderr, flush=True)
    import llama_cpp
    import llama_cpp.llama_chat_format
    import llama_cpp.server.__main__ as server

    folders = [a.split("=", 1)[1] for a in sys.argv if a.startswith(PROMPT_CACHE_DIR)]
    canon, argv = canonical.option([a for a in sys.argv if not a.startswith(PROMPT_CACHE_DIR)])
    draft, sys.argv = drafting(argv)
    if canon and draft is not None:  # drafts from the prompt alone: no earlier reply decides a batch
        draft.replies, draft.opening_tokens = 0, 0
    patch_llama(llama_cpp.Llama, PrefixStore(Path(folders[-1]) if folders else None), canon)
    patch_grammar_sampling(llama_cpp.Llama)
    patch_compact_calls(llama_cpp.Llama, llama_cpp.llama_grammar)
    patch_compact_listing(llama_cpp.llama_chat_format.Jinja2ChatFormatter)
    if draft is not None:
        patch_speculative(llama_cpp.Llama, draft)
    create_app = server.create_app
    server.create_app = lambda *args, **kwargs: add_middleware(create_app(*args, **kwargs))
    server.main()
