"""The structure the README promises: layers that import downward only, one owner for the query
vocabulary, small modules, and curated public APIs that change only on purpose."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import grimp
import pytest
from grimp import Layer

import agent
import executors
import fixtures
import llm
from executors import vocabulary

REPO = Path(__file__).resolve().parents[2]
PACKAGES = ("dbgorilla", "evaluation", "agent", "fixtures", "executors", "llm")
#: Top to bottom, as `[tool.importlinter]` in pyproject.toml writes them.
LAYERS = [
    Layer("dbgorilla"),
    Layer("evaluation"),
    Layer("agent", "fixtures", independent=True),
    Layer("executors", "llm", independent=True),
]
MAX_LINES = 400


def sources() -> list[Path]:
    return sorted(path for package in PACKAGES for path in (REPO / package).rglob("*.py"))


def illegal(graph: grimp.ImportGraph) -> set[str]:
    found = graph.find_illegal_dependencies_for_layers(layers=LAYERS, containers=set())
    return {f"{dependency.importer} -> {dependency.imported}" for dependency in found}


def test_layers_import_downward_only() -> None:
    assert illegal(grimp.build_graph(*PACKAGES)) == set()


def test_the_layer_check_catches_an_upward_import() -> None:
    graph = grimp.build_graph(*PACKAGES)
    graph.add_import(importer="executors.errors", imported="dbgorilla.config")
    graph.add_import(importer="agent.loop", imported="fixtures.datasets")
    assert illegal(graph) == {"executors -> dbgorilla", "agent -> fixtures"}


def cycles(graph: grimp.ImportGraph) -> set[str]:
    """Each import whose imported module imports its importer back, directly or not (type-checking
    imports and a package's `__init__` count: either makes a module unreadable without the other)."""
    found = set()
    for importer in graph.modules:
        for imported in graph.find_modules_directly_imported_by(importer):
            back = graph.find_shortest_chain(importer=imported, imported=importer)
            if back is not None:
                found.add(" -> ".join((importer, *back)))
    return found


def test_no_module_imports_itself_through_others() -> None:
    assert cycles(grimp.build_graph(*PACKAGES)) == set()


def test_the_cycle_check_catches_a_cycle() -> None:
    graph = grimp.build_graph(*PACKAGES)
    graph.add_import(importer="executors.results", imported="executors.snippet")
    assert "executors.results -> executors.snippet -> executors._assemble -> executors.results" in cycles(graph)


def test_import_linter_contract_passes() -> None:
    linter = Path(sys.executable).with_name("lint-imports")
    result = subprocess.run([str(linter)], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    # every contract written is checked (counted from the file: tomllib needs Python 3.11)
    contracts = (REPO / "pyproject.toml").read_text().count("[[tool.importlinter.contracts]]")
    assert contracts >= 4 and f"{contracts} kept, 0 broken" in result.stdout


def function_level_project_imports(path: Path) -> list[str]:
    """Imports of our own packages placed inside a function (the way cycles get hidden)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for inner in ast.walk(node):
            names = [inner.module or ""] if isinstance(inner, ast.ImportFrom) else []
            names += [alias.name for alias in inner.names] if isinstance(inner, ast.Import) else []
            found += [f"{path.relative_to(REPO)}:{inner.lineno} {n}" for n in names if n.split(".")[0] in PACKAGES]
    return found


def test_no_project_import_is_hidden_inside_a_function() -> None:
    assert [hit for path in sources() for hit in function_level_project_imports(path)] == []


def test_the_scan_finds_a_function_level_import(tmp_path: Path) -> None:
    probe = REPO / "executors" / "_probe_for_layers_test.py"
    probe.write_text("def f():\n    from dbgorilla import config\n    return config\n")
    try:
        assert function_level_project_imports(probe) == ["executors/_probe_for_layers_test.py:2 dbgorilla"]
    finally:
        probe.unlink()


def test_no_source_file_is_over_the_limit() -> None:
    long = {str(p.relative_to(REPO)): n for p in sources() if (n := len(p.read_text().splitlines())) > MAX_LINES}
    assert long == {}


OPERATOR_SYMBOLS = {op for ops in vocabulary.OPERATORS.values() for op in ops}
METRIC_NAMES = {m for ms in vocabulary.METRICS.values() for m in ms}
#: Metrics of one kind only (every kind takes COUNT and TYPE): two of them already make a table.
KIND_METRIC_NAMES = METRIC_NAMES - {"COUNT", "TYPE"}
SLOT_NAMES = set(vocabulary.COMPONENT_FIELDS)
TOKENIZATION_NAMES = {t.value for t in vocabulary.Tokenization}
#: (what, the names, how many of them in one place make a table, also spelled inside a text)
VOCABULARIES = (
    ("operators", OPERATOR_SYMBOLS, 3, False),
    ("metrics", METRIC_NAMES, 3, True),
    ("metrics", KIND_METRIC_NAMES, 2, True),
    ("slots", SLOT_NAMES, 3, True),
    ("tokenizations", TOKENIZATION_NAMES, 3, False),
)
WORDS = re.compile(r"[A-Za-z_]+")


def _docstrings(tree: ast.AST) -> set[int]:
    kinds = ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef
    return {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, kinds) and node.body and isinstance(node.body[0], ast.Expr)
    }


def vocabulary_tables(path: Path) -> list[str]:
    """Places that spell out the query vocabulary: a literal collection or an enum class holding three or
    more operators, metrics, slot names or tokenizations (two metrics of one kind), or a text (a prompt,
    not a docstring) naming three or more metrics or slot names."""
    found = []
    tree = ast.parse(path.read_text())
    docstrings = _docstrings(tree)
    for node in ast.walk(tree):
        in_text = False
        if isinstance(node, ast.Dict):
            items = [key for key in node.keys if key is not None] + node.values
        elif isinstance(node, ast.Tuple | ast.List | ast.Set):
            items = node.elts
        elif isinstance(node, ast.ClassDef):
            items = [statement.value for statement in node.body if isinstance(statement, ast.Assign)]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            items, in_text = [ast.Constant(word) for word in WORDS.findall(node.value)], True
        else:
            continue
        strings = {item.value for item in items if isinstance(item, ast.Constant) and isinstance(item.value, str)}
        for name, words, least, also_in_text in VOCABULARIES:
            if (also_in_text or not in_text) and len(strings & words) >= least:
                found.append(f"{path.relative_to(REPO)}:{node.lineno} {name}")
    return sorted(set(found))


def test_the_query_vocabulary_has_one_owner() -> None:
    owner = REPO / "executors" / "vocabulary.py"
    assert vocabulary_tables(owner), "the scan must see the owner's own tables"
    assert [hit for path in sources() if path != owner for hit in vocabulary_tables(path)] == []


#: What the scan missed before it was widened (issue 27): an enum of tokenizations, a pair of percent
#: metrics, and a prompt that lists the slots and their metrics.
MISSED = {
    "enum": 'class Tokenization(str, Enum):\n    WORD = "word"\n    FIELD = "field"\n    LOWERCASE = "lowercase"\n',
    "pair": 'PERCENT_METRICS = frozenset({"PERCENTAGE_TRUE", "PERCENTAGE_FALSE"})\n',
    "tuple": 'SUPPORTED = ("field", "word", "whitespace", "lowercase")\n',
    "prompt": 'HELP = """- integer_property_aggregation: {"metrics": COUNT|MIN|MAX}\n- groupby_property: a name"""\n',
}


@pytest.mark.parametrize("form", sorted(MISSED))
def test_the_vocabulary_scan_sees_what_it_missed(form: str) -> None:
    probe = REPO / "executors" / "_probe_for_vocabulary_test.py"
    probe.write_text(MISSED[form])
    try:
        assert vocabulary_tables(probe)
    finally:
        probe.unlink()


#: The curated public APIs. A change here is a deliberate API change (as httpx pins its own).
PUBLIC_APIS = {
    executors: [
        "DEFAULT_LLM_MAX_CHARS", "ERROR_CODES", "SUPPORTED_TOKENIZATIONS", "AggregationSpec", "Blame",
        "BooleanAggregation", "BooleanPropertyFilter", "CollectionSchema", "Component", "DataObject",
        "DatabaseSchema", "ErrorPayload", "ExecutorError", "ExecutorOptions", "FilterSpec", "GroupResult",
        "IntAggregation", "IntPropertyFilter", "InternalExecutorError", "InvalidArgumentsError",
        "InvalidMetricError", "InvalidOperatorError", "InvalidValueError", "PropertyKind", "PropertySchema",
        "QueryDatabaseArguments", "QueryResult", "QuerySpec", "ReadOnlyWeaviate", "ReferenceExecutor",
        "ResultObject", "SHORT_ID_CHARS", "Scope", "ScopeError", "ScopeFilter", "SearchMode", "TextAggregation", "TextPropertyFilter", "TopOccurrence",
        "TypeMismatchError", "UnknownCollectionError", "UnknownPropertyError", "UnknownToolError",
        "UnsupportedQueryError", "WeaviateCallError", "WeaviateExecutor", "WeaviateUnavailableError",
        "codes_blaming", "compare_results", "go_trim_space", "parse_arguments", "short_id", "tokenize",
        "tool_parameters_schema", "validate_arguments",
    ],
    agent: [
        "DEFAULT_TOKEN_BUDGET", "ORACLE", "TOOL_NAME", "Agent", "AgentConfig", "AgentRun", "ChatModel",
        "ExecutedCall", "ModelError", "ModelReply", "ModelTimeout", "ModelUnavailable", "OpenAIChatModel",
        "OracleModel", "RawToolCall", "ResponseOrToolCall", "Step", "StopReason", "ToolDesign", "ToolSet",
        "ToolVariant", "Usage", "build_tools", "schema_limit_violations",
    ],
    llm: [
        "PROBE", "ChatModel", "ChatRequest", "ModelError", "ModelMessage", "ModelReply", "ModelRequest",
        "ModelResponse", "ModelTimeout", "ModelUnavailable", "NamedTool", "OpenAIChatModel", "Provider",
        "RawToolCall", "ResponseFormat", "SchemaForms", "SystemPromptPart", "TextPart", "ToolCallPart",
        "ToolChoice", "ToolDefinition", "ToolReturnPart", "UnknownProvider", "Usage", "UserPromptPart",
        "open_model", "providers", "register", "split_model_name",
    ],
}  # fmt: skip


@pytest.mark.parametrize("module", list(PUBLIC_APIS), ids=lambda m: m.__name__)
def test_public_api_is_pinned(module: object) -> None:
    assert sorted(module.__all__) == sorted(PUBLIC_APIS[module])  # type: ignore[attr-defined]
    assert all(hasattr(module, name) for name in module.__all__)  # type: ignore[attr-defined]


def test_fixtures_exports_resolve() -> None:
    assert all(hasattr(fixtures, name) for name in fixtures.__all__)
