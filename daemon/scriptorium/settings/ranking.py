"""The ranking levers: ``RankingSettings`` and the ``[ranking]`` table declared from it.

Apart from the pipeline that reads them so the configuration (and its reference page) can load
the declared keys without the pipeline's stages. Kept whole past 500 lines: it is one table,
each lever's default, comment and help read side by side.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection
from dataclasses import dataclass, field

from scriptorium.settings.fields import FieldWeights
from scriptorium.settings.levers import off
from scriptorium.settings.schema import Key, check_table
from scriptorium.text.tokenize import MAX_QUERY_TERMS

DEFAULT_CLASS_WEIGHTS = {"product": 1.0, "reference": 0.9, "ledger": 0.75, "archive": 0.7}


@dataclass(frozen=True, slots=True)
class RankingSettings:
    weights: FieldWeights = field(default_factory=FieldWeights)
    class_weights: dict[str, float] = field(default_factory=lambda: dict(DEFAULT_CLASS_WEIGHTS))
    surface_boost: float = 1.35
    page_boost: bool = True
    superseded_factor: float = 0.5
    expired_factor: float = 0.5
    max_per_document: int = 2
    # Results whose words overlap a better result's by at least this share (Jaccard) are held
    # back like the per-document cap holds blocks back (variants of one example program, a
    # page copied into another tree); 0 is off.
    near_duplicate_similarity: float = 0.8
    # A code result whose lines lie inside a better one of the same file, or hold one (a
    # method under its class), is held back like a near-duplicate: fetching the one shows the
    # other. Documentation sections are not: a subsection is the more precise answer.
    hold_back_nested: bool = True
    # A block whose text holds an error message the query quotes (``ValueError: Matrix must
    # be symmetric.``: its fixed words, literally) weighs this much more: it raises or
    # explains that error. Up to ``message_candidates`` such blocks per quoted fragment join
    # the candidates, found among the blocks holding all of its words. 1.0 is off.
    message_factor: float = 3.0
    message_candidates: int = 10
    # A fragment held by more blocks than this says where nothing comes from (a phrase many
    # messages share): it marks none.
    message_sites: int = 3
    # The innermost block holding a line the query names (``File "pkg/mod.py", line 120``,
    # ``pkg/mod.py:120:8``) in a served file weighs this much more, and joins the candidates.
    place_factor: float = 2.0
    # A page weighed as a translation (an English query) is held back below a result of the
    # same page in another language (``docs/de/docs/x.md`` below ``docs/en/docs/x.md``): the
    # same answer again, in a language the query is not in.
    hold_back_translations: bool = True
    # Variants of one page (the same guide under sibling folders per framework, platform or
    # version: ranking/variants.py) are shown once: the first, unless the query names another's.
    hold_back_variants: bool = True
    # The same definition in a file at the same place under sibling packages that hold the
    # same files (``packages/solid-query/src/useQuery.ts`` beside ``packages/preact-query/…``):
    # ports of one function to each framework, shown once as pages are.
    hold_back_code_variants: bool = True
    over_fetch: int = 2
    min_candidates: int = 50
    # A question's lexical pool passes on at most this many blocks of one document (its best
    # by score): the window shows two, and more of one page cost the ranking a pass each.
    question_blocks_per_document: int = 3
    # Every search is ranked as if it asked for at least this many results (the candidate
    # pool, the definition floor, diversification), then cut: a shorter list is the prefix of
    # a longer one. 0: pool and window follow top_k.
    stable_window: int = 25
    # How scores from the docs and code corpora are made comparable: "raw" BM25, "max"
    # (divide by each corpus's best score) or "rrf" (reciprocal rank fusion).
    fusion: str = "max"
    rrf_k: int = off(60, "used only with fusion = rrf, which cost hit@5 (journal, Decisions)")
    # With "max": the share of the raw gap between the corpora's best scores that survives
    # (0: each corpus's best result scores 1.0, and a tie between the best doc and the best
    # code result falls to path order; 1: raw BM25). Each corpus is scaled by
    # (its best / the overall best) to this power.
    fusion_blend: float = 0.1
    # Factor for documentation blocks that render API reference from code at site build time
    # (mkdocstrings ``:::`` directives): in the source they hold little beyond the names they
    # match, and the code they point to is indexed itself.
    directive_factor: float = 0.8
    # Factor for code blocks that define a name the query spells out (``def Depends``,
    # ``APIRouter include_router``): asking for an identifier usually means its definition,
    # which stemming alone cannot tell from every block that merely uses a related word.
    definition_factor: float = 1.2
    # A question naming a definition and giving at least this many other terms, none of which
    # the defining block holds, asks for a task the name takes part in ("useInfiniteQuery
    # load more button"): that block does not take definition_factor. 0 is off.
    definition_task_terms: int = 2
    # Extra lexical candidates among the code blocks defining a name the query spells out
    # (exact, case-folded): a definition with a long docstring can sit beyond the first
    # candidates of a one-word query that every related block matches; 0 is off.
    definition_candidates: int = 10
    # Only query words that look like identifiers name a definition (``snake_case``,
    # ``camelCase``, ``a.b``, ``f()``, a code span, a capitalised word in an otherwise
    # lower-case query): "add retries" is not asking for ``QueryParams.add``. True holds for
    # every query; definition_words says which queries' plain words count otherwise.
    definition_identifiers_only: bool = off(
        False, "swebench lost 4 cases, won 1 (journal round 5); definition_words covers questions"
    )
    # Which queries' plain English words may name a definition too: "any", or "pasted" (only
    # a text longer than long_query_chars, where "the fixture's finalizer" names the module it
    # is about; a question's "add" or "write" is a verb, not ``QueryParams.add``).
    definition_words: str = "pasted"
    # Document-level evidence: a block is weighed up by 1 + this x the share of the query's
    # terms that other blocks of its document (among the candidates) match and it does not,
    # so a page whose matching words are spread over its sections can beat one section that
    # matches a few of them; docs and code apart. 0 is off.
    document_evidence: float = off(
        0.0, "fastapi 6 better / 9 worse, swebench 0 / 3, all within noise (journal rounds 5, 10)"
    )
    document_evidence_code: float = off(
        0.0,
        "swebench's 169 issues, lexical, at 0.5: micro MRR +0.007 and Hit@5 −0.006, 9 better / "
        "6 worse; at 1.0: MRR level, 15 / 12 (journal 2026-12-07, usage words, §9)",
    )
    # Term coverage: a block of a question (at most term_coverage_max_terms distinct terms) is
    # weighed by the share of the query's distinct terms it matches, to this power, so a
    # small section matching one word in its heading cannot outrank one matching them all;
    # 0 is off (ranking/coverage.py).
    term_coverage: float = 0.5
    term_coverage_max_terms: int = 12
    # Factor for tests, fixtures, vendored or generated code, changelogs / release notes,
    # repository meta files (``.github`` issue templates), examples (``examples/``,
    # ``docs_src/``, code in a docs folder) and experimental APIs (an ``experimental/``
    # folder's code and pages), told by their paths, unless the query names that
    # kind: they repeat the words of the code and docs they exercise or describe. A page
    # with a class of its own (front matter, the source's ``class_rules``) is weighed by that
    # class instead. 1.0 is off.
    auxiliary_factor: float = 0.5
    # Factor (instead of auxiliary_factor) for legacy code: a v1/, legacy/, deprecated/ or
    # compat/ folder, unless the query names that kind ("pydantic v1", "deprecated"); 1.0 is
    # off.
    legacy_factor: float = 0.5
    # Factor for a definition marked deprecated where it is declared (a @deprecated decorator
    # or annotation, a doc comment's @deprecated tag, a docstring's ".. deprecated::", a
    # deprecation warning its body raises), unless the query names that kind or names the
    # definition itself: the current API first. A pasted text (an issue, a traceback) is
    # about the code that ran, deprecated or not: it is left alone. 1.0 is off.
    deprecated_factor: float = 0.5
    # Factor for results of an installed dependency (a ``dependencies`` source) unless the
    # query names that library or the search is limited to it: the project's own answer first.
    # 1.0 is off.
    library_factor: float = 0.75
    # A reference page named by a dotted name that has a shorter twin among the candidates
    # (numpy.ma.clip beside numpy.clip) weighs this unless the query names what it adds.
    qualified_twin_factor: float = 0.8
    # Build, release and maintenance scripts count as auxiliary too: ``setup.py``, a docs
    # folder's ``conf.py``, top-level ``tools/``, ``scripts/``, ``utils/``, ``release/``, and
    # benchmark folders.
    auxiliary_tooling: bool = True
    # Migration, upgrade and compatibility guides count as auxiliary too (a documentation
    # page named ``migration.md``, ``migrate-from-…``, ``upgrading.md``,
    # ``…-upgrade-guide.md``, ``compatibility.md``) unless the query asks to migrate or
    # upgrade or speaks of compatibility: such a guide names every API twice, old and new (or
    # another library's beside this one's), and so matches a question about using any of them.
    auxiliary_migration: bool = True
    # Error references count as auxiliary too (a documentation page of an errors/ or
    # exceptions/ folder, or named validation_errors.md, exceptions.md, error-codes.md)
    # unless the query speaks of an error ("error", "exception", "raise", "fails", ...): such
    # a page shows every feature once more, in the example that makes it fail.
    auxiliary_errors: bool = True
    # Pages on using the library with another tool count as auxiliary too (an integrations/
    # folder's pages, a list of third-party packages) unless the query names the tool the
    # page is named after or asks for an integration ("plugin", "third party", "editor"):
    # such a page repeats the library's features as that tool sees them.
    auxiliary_integrations: bool = True
    # Factor for code results of a one-line question that names no identifier (no snake_case,
    # dotted name, code span, camelCase), does not ask for code ("function", "class",
    # "implemented") and is not a pasted text, in the default mode: "how do I ..." asks for
    # the docs; code still answers when no page does. 1.0 is off.
    question_code_factor: float = 0.5
    # Whether a question's all-capitals words (JSON, SSL, CA, HTTP) read as its prose for
    # question_code_factor rather than as identifiers: "use a custom CA bundle for SSL
    # verification" asks for the docs as "set a timeout" does. The semantic retriever still
    # takes them as names (semantic_names_lexical): an acronym is exact vocabulary.
    question_acronyms_prose: bool = True
    # Factor for code results of a one-line question that names identifiers but reads as
    # prose about using them ("how do I catch HTTPStatusError", "use ConfigDict to forbid
    # extra fields"): a word of its own besides the names, none asking for code, not a pasted
    # text, the default mode. The page that shows the use comes before the definition; the
    # definition still answers where no page does. 1.0 is off.
    usage_question_code_factor: float = 0.6
    # Whether a short question naming no identifier is read for definitions' names it spells
    # as separate words ("oauth2 password bearer" for OAuth2PasswordBearer, "jsonable encoder"
    # for jsonable_encoder: spans of two to four words the index defines as one name): such a
    # question is a lookup of that name (no question_code_factor), and the definition is a
    # candidate weighed by definition_factor.
    spelled_names: bool = True
    # Whether a pasted text's documentation pool also searches for the identifiers two
    # adjacent words of its prose spell, where the index holds them ("the targets are one
    # hot" for one_hot, a page's name). Since 2026-12-07 (journal, phrase names): ds1000 MRR
    # 0.341 -> 0.350, every other set and swebench's 169 the same. Added to both pools, the
    # English compounds of issue texts that name a code base's identifiers ("default value",
    # "return value") cost swebench MRR 0.741 -> 0.734.
    phrase_names: bool = True
    # Which words of a query ask for an auxiliary kind ("tests", "changelog", "github") and so
    # lift its factor: "words" (any), "prose" (not inside links, code or paths), "short"
    # (prose, and none in a query longer than long_query_chars: a pasted text is not asking).
    auxiliary_asks: str = "short"
    # How many distinct terms of a query are searched for, and which when it has more: the
    # first ones, or (``frequent_query_terms``) the ones it says most often.
    max_query_terms: int = MAX_QUERY_TERMS
    frequent_query_terms: bool = off(
        False, "swebench +0.031 MRR within noise, 12 better / 11 worse (journal round 6)"
    )
    # For a pasted text (longer than long_query_chars) with more terms than that, the terms of
    # its identifier-like words are kept first (and its names for the definition prior).
    identifier_terms_first: bool = off(
        False, "swebench −0.031 MRR, 7 better / 14 worse (journal round 8)"
    )
    # A term the query says n times weighs 1 + this x ln(n) in BM25 (a pasted issue text
    # repeats the name it is about); 0 is off.
    query_term_frequency: float = off(
        0.0, "swebench +0.016 MRR within noise, 18 better / 17 worse (journal round 6)"
    )
    # Factor for terms that come from identifier-like query words (code spans, snake_case,
    # dotted names, camelCase): in a long text they are the specific part; 1.0 is off.
    identifier_term_weight: float = off(
        1.0, "× 2: fastapi −0.010 MRR (round 6); × 1.5: swebench −0.009 (journal round 10)"
    )
    # Factor for the terms of a pasted text's first line when it reads as a title (at most
    # title_chars characters): an issue's title says what it is about in a few words, and
    # the body around its code and traceback repeats the words of everything nearby.
    title_term_weight: float = 1.5
    title_chars: int = 200
    # Those two weights apply to queries longer than this many characters (a pasted issue
    # text, a traceback): in a short question every word is the specific part. Characters
    # rather than terms, since a short CJK question cuts into many bigram terms.
    long_query_chars: int = 300
    # A query of at least this many lines is a pasted text too, however short: a snippet of
    # code with a comment saying what it wants, a traceback's last frames. A question typed
    # by hand is one line, or two when it wraps. 0: length alone decides.
    pasted_lines: int = 3
    # Factor for documentation results of a query longer than long_query_chars: a pasted
    # issue text, traceback or program is about the code it quotes more often than about a
    # page; 1.0 is off.
    long_query_docs_factor: float = 0.5
    # Factor (instead of definition_factor) for code blocks whose qualified name the query
    # spells out (``Plotter._finalize_figure``): as specific as a file's path; 1.0 is off.
    qualified_definition_factor: float = 1.5
    # Whether a query's HTML comments are left out of the search: in a pasted issue text they
    # are the template's hidden prompts, which match the template and contributing pages.
    drop_html_comments: bool = True
    # Whether a short question's comparison word ("vite vs webpack", "X versus Y") is left out
    # of the search: it says how the topics relate, not what they are, and as a rare term it
    # matches the pages that say "VS Code".
    drop_comparison_words: bool = True
    # Whether the language names of a query's fenced code blocks (```python) are left out of
    # its terms: they say how to highlight the block, not what it is about.
    drop_fence_languages: bool = off(
        False, "with form labels or version lines: swebench −0.008 / −0.011 (journal round 9)"
    )
    # Whether a pasted text's issue-form labels ("### Python version", "- [X] Minimal
    # example") are left out of its terms: every issue of the project repeats them.
    drop_form_labels: bool = off(
        False, "swebench −0.008 MRR with drop_fence_languages (journal round 9)"
    )
    # Whether a pasted text's lines listing installed versions ("numpy: 1.22.4") are left
    # out of its terms: they describe the writer's machine, not the problem.
    drop_version_lines: bool = off(
        False, "swebench −0.011 MRR with drop_fence_languages (journal round 9)"
    )
    # Whether a pasted text's web addresses are left out of its terms (where the writer put
    # an example, which thread came before: no code's words).
    drop_urls: bool = off(False, "swebench −0.016 MRR with drop_single_letters (journal round 9)")
    # Whether a pasted text's one-letter terms (the "t" of "don't", a variable "x") are left
    # out, so the max_query_terms cap goes to words that can say something.
    drop_single_letters: bool = off(False, "swebench −0.016 MRR with drop_urls (journal round 9)")
    # Whether a pasted text's terms of digits alone are left out (a data dump's 0s and 1s,
    # line numbers, versions), so the max_query_terms cap goes to words.
    drop_numbers: bool = off(
        False,
        "no gain: ds1000 Hit@5 0.427 → 0.421, swebench MRR 0.776 → 0.777 (journal 2026-12-05)",
    )
    # Factor for blocks of files the query names by path or module name (a traceback frame,
    # ``xarray/core/variable.py``, ``sphinx.util.inspect``), and how many of their blocks join
    # the candidates when the lexical search left them out; 1.0 / 0 are off.
    named_file_factor: float = 1.5
    named_file_candidates: int = 10
    # Further factor for the file a query names last when it names two or more: in a
    # traceback the innermost frame, where the error was raised; 1.0 is off.
    last_file_factor: float = 1.3
    # Whether dotted module names (``sphinx.util.inspect``) name files, besides paths.
    named_modules: bool = off(
        False, "issues name modules a user imports: paths alone won 9 / lost 1 (journal round 6)"
    )
    # Fraction of query terms the best result must contain before the answer is trusted.
    low_confidence_coverage: float = 0.34
    # Factor for results whose script (CJK or not) differs from the query's; 1.0 is off.
    language_prior: float = off(
        1.0, "on top of the field weights it moved nothing (journal, Decisions)"
    )
    # Factor for documentation pages a folder names as a translation (``docs/de/``,
    # ``i18n/pt-br/``; any language but English) when the query is written in plain ASCII,
    # so in English as far as the daemon can tell; a query with other letters is not
    # judged. 1.0 is off.
    translation_factor: float = 0.5
    # The plugin (its entry-point name) whose scriptorium_rerank re-scores the best
    # rerank_depth candidates after the scoring stages; "" is off (and costs nothing).
    reranker: str = off(
        "", "no packaged cross-encoder in a reachable registry; a plugin may bring one"
    )
    rerank_depth: int = off(50, "used only with a reranker")
    # Whether docs and code each get their own lexical candidates (candidate_limit of each),
    # fused after scoring; else one pool for both, where a code-heavy tree crowds docs out.
    per_corpus_candidates: bool = True
    # The semantic retriever (semantic/): block vectors made in the background after a
    # generation serves, each corpus's nearest blocks added to its candidates, and every
    # candidate's score a mix of BM25 and cosine. Off, or before the vectors exist, ranking is
    # lexical alone.
    semantic: bool = True
    # The encoder: a model folder's name under the virtualenv's share/scriptorium/models, or
    # a path to one ("" is the default model).
    semantic_model: str = ""
    # Tokens of each passage (and query) the encoder reads.
    semantic_tokens: int = 256
    # Tokens of a query the encoder reads (0: as many as of a passage).
    semantic_query_tokens: int = off(
        0, "512 tokens of a query: no gain on ds1000 (MRR 0.225 → 0.224)"
    )
    # A passage longer than semantic_tokens is also read up to this many tokens, and its
    # vector is the mean of the two readings (0: one reading). 512 since 2026-12-07 (journal,
    # two readings): libref MRR 0.558 -> 0.583, ds1000 0.330 -> 0.341, no set worse; a
    # long passage costs a second, longer encoding.
    semantic_long_tokens: int = 512
    # Nearest blocks read per corpus: the last of them sets the cosine's floor.
    semantic_candidates: int = 50
    # Which of them become candidates: "all", or "share" (the first semantic_candidates ×
    # the cosine's share of the score ÷ the largest share, rounded up): past those, blocks
    # only the meaning reaches do not reach the results.
    semantic_added: str = "share"
    # The cosine's share of a candidate's score: for questions (docs, code) whose lexical
    # candidates match all their terms, and for pasted texts longer than long_query_chars
    # (docs, code); 0 leaves that case lexical. Docs 0.3 since 2026-12-06 (0.2 before): the
    # suite's question sets as good or better (docs-search MRR 0.885 -> 0.901), short
    # library-reference intents Hit@5 0.529 -> 0.647 (journal 2026-12-06, static encoder
    # and vector pass). 0.5 since 2026-12-06, with semantic_added_bm25: libref MRR 0.496 ->
    # 0.529 (16 better, 3 worse), docs-search 0.901 -> 0.921 (journal 2026-12-06, questions'
    # share).
    semantic_weight: float = 0.5
    semantic_weight_code: float = 0.2
    # For a question, the share rises towards this as its lexical candidates match less of
    # it (none of its terms: this share).
    semantic_weight_uncovered: float = 1.0
    # Whether a question that names an identifier (``APIRouter``, ``include_router``, a code
    # span) is ranked lexically: a lookup by name, where the exact name is the evidence.
    semantic_names_lexical: bool = True
    # Which questions about using the names they give (``ranking/questions.py``,
    # ``usage_question``: "use ConfigDict to forbid extra fields") read the cosine as a plain
    # question does, rather than as a lookup by name (semantic_names_lexical): "off" (none),
    # "names" (those naming an identifier other than an all-capitals acronym), "all" (those
    # naming only acronyms too: "serialize a model to JSON").
    semantic_usage_questions: str = "all"
    # Whether the encoder reads a pasted text's sentences only (no fenced code, code lines,
    # data rows or tracebacks).
    semantic_prose: bool = off(
        False, "no gain on ds1000 (MRR 0.225 → 0.222): code lines name the functions"
    )
    semantic_weight_long: float = 0.7
    # Characters of a pasted text's end the encoder also reads, when the text is longer: the
    # query's vector is the mean of its start's and its end's (0: the start only).
    semantic_query_tail: int = off(
        0, "noise on ds1000: 400/600/1000 characters moved MRR 0.306 to 0.301/0.315/0.310"
    )
    semantic_weight_long_code: float = 0.2
    # Where a candidate's cosine counts from: "candidates" (the lowest among them) or
    # "nearest" (the last of the corpus's nearest blocks; below it, 0).
    semantic_floor: str = "nearest"
    # The share of a block's cosine taken from its page opening's (its document's first block).
    semantic_page_context: float = 0.3
    # For a question, a documentation block only the meaning found is scored by the question's
    # words too (its BM25, as the lexical pool would have given it had it reached so deep),
    # not 0.
    semantic_added_bm25: bool = True
    # Tokenizer levers (they change what is indexed, so the index is rebuilt when they change).
    stem: bool = True
    stopwords: bool = True
    split_identifiers: bool = True
    cjk_bigrams: bool = True

    def token_options(self) -> dict[str, bool]:
        return {
            "stem": self.stem,
            "drop_stopwords": self.stopwords,
            "split_identifiers": self.split_identifiers,
            "cjk_bigrams": self.cjk_bigrams,
        }

    def token_key(self) -> tuple[tuple[str, bool], ...]:
        """:meth:`token_options` as a hashable key, for the caches of what tokens a block or a
        query makes (``ranking.bodies.matched_terms``)."""
        return tuple(sorted(self.token_options().items()))

    def definition_identifiers(self, text: str) -> bool:
        """Whether only the identifier-like words of ``text`` name a definition."""
        if self.definition_identifiers_only:
            return True
        return self.definition_words == "pasted" and not self.is_pasted(text)

    def is_pasted(self, text: str) -> bool:
        """Whether a query is a pasted text (an issue, a traceback, a snippet of code) rather
        than a question: longer than ``long_query_chars``, or of ``pasted_lines`` lines or
        more. The long-query levers apply to it."""
        if len(text) > self.long_query_chars:
            return True
        lines = self.pasted_lines
        return lines > 0 and text.strip().count("\n") + 1 >= lines

    def window(self, top_k: int) -> int:
        """How many results a search asking for ``top_k`` is ranked for before the cut."""
        return max(top_k, self.stable_window)

    def candidate_limit(self, top_k: int) -> int:
        return max(self.min_candidates, self.window(top_k) * self.over_fetch)

    def page_kinds(self) -> frozenset[str]:
        """The documentation page kinds switched on, as ``ranking.paths.auxiliary_kind`` names
        them."""
        switched = {
            "migration": self.auxiliary_migration,
            "errors": self.auxiliary_errors,
            "integrations": self.auxiliary_integrations,
        }
        return frozenset(kind for kind, on in switched.items() if on)

    def pools_apart(self, corpora: Collection[object]) -> bool:
        """Whether a search of ``corpora`` (empty: both) gets a lexical pool per corpus."""
        return len(corpora) != 1 and self.per_corpus_candidates


# The string levers' values.
_CHOICES = {
    "fusion": ("raw", "max", "rrf"),
    "semantic_floor": ("candidates", "nearest"),
    "semantic_added": ("all", "share"),
    "auxiliary_asks": ("words", "prose", "short"),
    "definition_words": ("any", "pasted"),
    "semantic_usage_questions": ("off", "names", "all"),
}

_KEY_TYPES = {bool: "bool", int: "integer", float: "number", str: "string", dict: "number_table"}

# One sentence per lever of RankingSettings, for the [ranking] table's help and docs/settings.md.
_HELP = {
    "class_weights": "score factor per source class (product, reference, ledger, archive); "
    "a class not listed keeps 1.0",
    "surface_boost": "factor for results whose path or section headings share a word with the "
    "request's surface",
    "page_boost": "whether a page's front-matter search.boost multiplies its results' scores",
    "superseded_factor": "factor for results from pages that name a successor (superseded_by)",
    "expired_factor": "factor for results from pages outside their effective_from/effective_to "
    "dates (with as_of set they are dropped instead)",
    "max_per_document": "most results one document may place in the window, the rest are held "
    "back; 0 is no cap",
    "near_duplicate_similarity": "word overlap (Jaccard) with a better result at which a result "
    "is held back as a near-duplicate; 0 is off",
    "hold_back_nested": "whether a code result whose lines lie inside a better one of the same "
    "file, or hold one (a method under its class), is held back like a near-duplicate",
    "hold_back_variants": "whether variants of one page (the same guide under sibling folders "
    "per framework, platform or version, the two folders holding the same pages) are shown once: "
    "the first, or the one whose folder names the newest version; a variant whose folder the "
    "query names is shown too",
    "hold_back_code_variants": "with hold_back_variants, whether the same definition (its "
    "name and its file's name) at the same place under sibling folders holding the same files "
    "(a library's port per framework: packages/solid-query/src/useQuery.ts beside "
    "packages/preact-query/src/useQuery.ts) is shown once too",
    "hold_back_translations": "whether a page weighed as a translation (an English query) is "
    "held back below a result of the same page in another language (docs/de/docs/x.md below "
    "docs/en/docs/x.md)",
    "message_factor": "factor for a block whose text holds an error message the query quotes "
    "(the fixed words of 'ValueError: Matrix must be symmetric.', literally); 1.0 is off",
    "message_candidates": "most blocks holding a quoted message's words that join the "
    "candidates, per fragment of the message",
    "message_sites": "a quoted message's fragment held by more blocks than this marks none "
    "(a phrase many messages share)",
    "place_factor": "factor for the innermost block holding a line the query names (a "
    'traceback\'s File "pkg/mod.py", line 120, or pkg/mod.py:120:8); 1.0 is off',
    "over_fetch": "lexical candidates fetched per requested result (top_k times this, at least "
    "min_candidates)",
    "min_candidates": "fewest lexical candidates fetched, however small top_k is",
    "question_blocks_per_document": "most blocks of one document a question's lexical pool "
    "passes on to the ranking (its best by score; the definitions and files the query names "
    "join whatever their document); 0 is no cap",
    "stable_window": "rank every search as if top_k were at least this, then cut, so a "
    "shorter result list is the prefix of a longer one (0: follow top_k)",
    "definition_identifiers_only": "give the definition prior and candidates only to query "
    "words that look like identifiers (snake_case, camelCase, dotted, code spans), in every query",
    "definition_words": "which queries' plain words may name a definition as well: any, or "
    "pasted (only pasted texts: longer than long_query_chars or of pasted_lines lines)",
    "document_evidence": "weigh up documentation blocks by the share of query terms only "
    "other blocks of their page match (0 is off)",
    "document_evidence_code": "the same for code files (0 is off)",
    "term_coverage": "weigh a question's blocks by the share of its distinct terms they "
    "match, to this power (0 is off)",
    "term_coverage_max_terms": "queries with more distinct terms than this (a paragraph, not a "
    "question) are not weighed by term_coverage",
    "auxiliary_asks": "which query words lift auxiliary_factor by naming a kind: words (any), "
    "prose (not in links, code or paths) or short (prose, none in queries over "
    "long_query_chars)",
    "auxiliary_factor": "factor for tests, fixtures, vendored or generated code, changelogs, "
    "blog posts and pages named by a date, examples (examples/, docs_src/, code in a docs "
    "folder), experimental APIs (experimental/ folders) and the files of hidden folders "
    "(.github/, .vitepress/) unless the query names "
    "that kind (1.0 is off)",
    "per_corpus_candidates": "give docs and code each their own lexical candidates, fused "
    "after scoring (else one pool for both, where code can crowd docs out)",
    "semantic": "the semantic retriever: block vectors made in the background once a generation "
    "serves, nearest blocks added per corpus, scores mixed with BM25 (false: lexical only)",
    "semantic_model": "the encoder: a model folder under the virtualenv's "
    "share/scriptorium/models, or a path to one (empty: the default, bge-small-en-v1.5 int8)",
    "semantic_tokens": "tokens of each passage and query the encoder reads (changing it "
    "encodes every block again)",
    "semantic_query_tokens": "tokens of a query the encoder reads, up to the model's 512 (0: "
    "semantic_tokens)",
    "semantic_long_tokens": "a passage longer than semantic_tokens is also read up to this many "
    "tokens (the model's limit is 512) and gets the mean of both readings (0: one reading; "
    "changing it encodes the long passages again)",
    "semantic_candidates": "nearest blocks by cosine read per corpus: the last of them sets the "
    "cosine's floor",
    "semantic_added": "which of the nearest blocks a search takes as candidates: all, or share "
    "(the first semantic_candidates × the cosine's share of its score ÷ the largest share, "
    "rounded up; all when its words found fewer blocks than the pool holds; the rest only "
    "set the floor)",
    "semantic_weight": "the cosine's share of a documentation candidate's score for a question",
    "semantic_weight_code": "the cosine's share of a code candidate's score for a question",
    "semantic_weight_uncovered": "for a question, the cosine's share when its best lexical "
    "candidates match none of its terms, falling linearly to semantic_weight (or _code) as "
    "one of them matches them all",
    "semantic_names_lexical": "rank a question that names an identifier (APIRouter, "
    "include_router, a code span) lexically: a lookup by name",
    "semantic_usage_questions": "which questions about using the names they give read the cosine "
    "as a plain question does, not as a lookup by name: off, names (an identifier other than an "
    "acronym), all (acronyms too)",
    "semantic_prose": "the encoder reads a pasted text's sentences only (no fenced code, code "
    "lines, data rows or tracebacks)",
    "semantic_weight_long": "the cosine's share of a documentation candidate's score for a "
    "pasted text (longer than long_query_chars, or of pasted_lines lines or more)",
    "semantic_weight_long_code": "the cosine's share of a code candidate's score for a pasted text",
    "semantic_query_tail": "characters of a pasted text's end the encoder reads as well, when "
    "the text is longer (the query's vector: the mean of its start's and its end's; 0: the "
    "start only)",
    "semantic_page_context": "the share of a block's cosine taken from its page opening's (its "
    "document's first block): a section is read with what its page is about; 0 is off",
    "qualified_twin_factor": "factor for a documentation page named by a dotted name "
    "(numpy.ma.clip) when a candidate names the same package and last name with fewer parts "
    "(numpy.clip) and the query names none of the parts it adds; 1.0 is off",
    "semantic_added_bm25": "for a question, score a documentation block only the meaning found "
    "by the question's words too (its BM25, as a deeper lexical pool would have given it) rather "
    "than 0",
    "semantic_floor": "where a candidate's cosine is scaled from: candidates (the lowest among "
    "them) or nearest (the last of the corpus's nearest blocks; a candidate below it counts 0)",
    "legacy_factor": "factor, instead of auxiliary_factor, for legacy code (v1/, legacy/, "
    "deprecated/, compat/ folders) unless the query names that kind; 1.0 is off",
    "deprecated_factor": "factor for code defining a name marked deprecated where it is "
    "declared (a @deprecated decorator or annotation, a doc comment's @deprecated tag, a "
    "docstring's .. deprecated::, a deprecation warning its body raises) unless the query "
    "names that kind or the name itself, for a question (not a pasted text); 1.0 is off",
    "library_factor": "factor for results of an installed dependency (a dependencies source) "
    "unless the query names that library or the search is limited to it; 1.0 is off",
    "fusion": "how docs and code scores are made comparable: raw (BM25 as is), max (divided by "
    "each corpus's best) or rrf (reciprocal rank fusion)",
    "rrf_k": "the k of reciprocal rank fusion, score 1 / (k + rank); used when fusion is rrf",
    "fusion_blend": "with fusion max, the share of the raw gap between the corpora's best scores "
    "that survives (0: each corpus's best scores 1.0; 1: raw BM25)",
    "directive_factor": "factor for documentation blocks that render API reference from code "
    "(mkdocstrings ::: directives)",
    "definition_factor": "factor for code blocks that define a name the query spells out",
    "definition_task_terms": "a question (not a pasted text) that names a definition and "
    "gives at least this many other terms, none of which the defining block holds, asks for a "
    'task the name takes part in ("useInfiniteQuery load more button"): that block does not '
    "take definition_factor; 0 is off",
    "qualified_definition_factor": "factor, instead of definition_factor, for code blocks whose "
    "qualified name (Class.method, ns::fn) the query spells out; 1.0 is off",
    "definition_candidates": "extra lexical candidates among code blocks defining a name the "
    "query spells out (with definition_factor above 1); 0 is off",
    "max_query_terms": "most distinct query terms searched for",
    "frequent_query_terms": "when a query has more terms than max_query_terms, keep the ones it "
    "says most often rather than the first ones",
    "identifier_terms_first": "for a query over long_query_chars with more than max_query_terms "
    "terms, keep those of its identifier-like words first (code spans, snake_case, dotted, "
    "camelCase)",
    "query_term_frequency": "weigh a term the query says n times by 1 + this x ln(n) (0 is off)",
    "identifier_term_weight": "factor for query terms from identifier-like words (code spans, "
    "snake_case, dotted names, camelCase); 1.0 is off",
    "title_term_weight": "factor for the terms of a pasted text's first line when it reads "
    "as a title (an issue's); 1.0 is off",
    "title_chars": "the longest first line title_term_weight takes for a title",
    "auxiliary_integrations": "pages on using the library with another tool (an integrations/ "
    "folder's, a list of third-party packages) count as auxiliary unless the query names the tool "
    "or asks for an integration",
    "auxiliary_errors": "error references (a docs page of an errors/ folder, or named "
    "validation_errors.md, exceptions.md) count as auxiliary unless the query speaks of an error",
    "auxiliary_migration": "migration, upgrade and compatibility guides (a docs page named "
    "migration.md, migrate-from-…, upgrading.md, compatibility.md) count as auxiliary unless the "
    "query asks to migrate or upgrade or speaks of compatibility",
    "auxiliary_tooling": "build, release and maintenance scripts (setup.py, a docs conf.py, "
    "top-level tools/, scripts/, utils/, release/, benchmarks) count as auxiliary",
    "question_code_factor": "factor for code results of a one-line question (not a pasted text) "
    "that names no identifier and does not ask for code; 1.0 is off",
    "question_acronyms_prose": "a question's all-capitals words (JSON, SSL, CA) count as prose "
    "for question_code_factor, not as identifiers that name code",
    "spelled_names": "a short question is read for definitions' names it spells as separate "
    "words (oauth2 password bearer for OAuth2PasswordBearer): a lookup of that name",
    "phrase_names": "a pasted text's documentation pool also searches for the identifiers two "
    "adjacent words of its prose spell (one hot for one_hot), where the index holds them",
    "usage_question_code_factor": "factor for code results of a one-line question that names "
    "identifiers but reads as prose about using them (a word of its own, none asking for code); "
    "1.0 is off",
    "named_file_factor": "factor for results from files the query names by path or module "
    "name (a traceback frame, a/b.py, a.b.c); 1.0 is off",
    "named_file_candidates": "extra lexical candidates among the blocks of files the query "
    "names (with named_file_factor above 1); 0 is off",
    "last_file_factor": "further factor for the file a query names last of two or more (a "
    "traceback's innermost frame); 1.0 is off",
    "named_modules": "whether dotted module names in a query (a.b.c) name files for "
    "named_file_factor, besides file paths",
    "long_query_chars": "query_term_frequency, identifier_term_weight and auxiliary_asks short "
    "apply only to queries "
    "longer than this many characters (0: to every query)",
    "pasted_lines": "a query of at least this many lines counts as a pasted text whatever its "
    "length (0: long_query_chars alone decides)",
    "long_query_docs_factor": "factor for documentation results of a pasted text (an issue "
    "text, a traceback, a snippet: see long_query_chars and pasted_lines); 1.0 is off",
    "drop_html_comments": "leave a query's HTML comments (<!-- -->, an issue template's hidden "
    "prompts) out of the search",
    "drop_comparison_words": "leave a question's comparison word (vs, versus) out of the "
    "search when it has other terms",
    "drop_fence_languages": "leave the language names of a query's fenced code blocks "
    "(```python) out of its terms",
    "drop_form_labels": "leave a pasted text's issue-form labels (### headings, - [x] "
    "confirmations, **bold** label lines) out of its terms",
    "drop_version_lines": "leave a pasted text's lines that list installed versions (numpy: "
    "1.22.4, pandas==1.4.2) out of its terms",
    "drop_urls": "leave a pasted text's web addresses out of its terms",
    "drop_single_letters": "leave a pasted text's one-letter ASCII terms out of its terms "
    "(before max_query_terms is applied)",
    "drop_numbers": "leave a pasted text's terms of digits alone out of its terms (before "
    "max_query_terms is applied)",
    "translation_factor": "factor for docs pages under a language folder other than English "
    "(docs/de/, i18n/pt-br/), or of a source whose root is one beside an English folder "
    "(docs/ja/docs beside docs/en/), when the query is plain ASCII and reads as English (not "
    "'wie kann ich ...'); 1.0 is off",
    "low_confidence_coverage": "share of a multi-term query's terms the best result must hold; "
    "below it the search abstains as low_confidence",
    "language_prior": "factor for results whose script (CJK or not) differs from the query's; "
    "1.0 is off",
    "reranker": "entry-point name of the plugin whose scriptorium_rerank hook re-scores the "
    "best candidates after the scoring stages (docs/plugins.md); empty is off",
    "rerank_depth": "how many of the best candidates the reranker re-scores",
    "stem": "stem words when indexing and querying (a change rebuilds the index)",
    "stopwords": "leave stopwords out of the index and the query (a change rebuilds the index)",
    "split_identifiers": "index the words of compound identifiers (camelCase, snake_case) "
    "besides the whole name (a change rebuilds the index)",
    "cjk_bigrams": "cut CJK runs into overlapping two-character tokens rather than single "
    "characters (a change rebuilds the index)",
}


def _ranking_keys() -> tuple[Key, ...]:
    """The [ranking] table: every lever of :class:`RankingSettings`, plus the field weights.

    Derived from the dataclass so a new lever is a known key the moment it exists.
    """
    defaults = RankingSettings()
    weights = FieldWeights()
    keys = [
        Key("body_weight", "number", weights.body, "BM25 boost of block bodies"),
        Key("heading_weight", "number", weights.heading, "BM25 boost of headings"),
        Key("path_weight", "number", weights.path, "BM25 boost of paths"),
        Key(
            "docs_path_weight",
            "number",
            weights.path,
            "BM25 boost of documentation pages' paths (default: path_weight)",
        ),
    ]
    for item in dataclasses.fields(RankingSettings):
        if item.name == "weights":
            continue
        value = getattr(defaults, item.name)
        keys.append(
            Key(
                item.name,
                _KEY_TYPES[type(value)],
                value,
                _HELP.get(item.name, ""),
                choices=_CHOICES.get(item.name, ()),
            )
        )
    return tuple(keys)


RANKING_KEYS: tuple[Key, ...] = _ranking_keys()


def ranking_settings(raw: dict) -> RankingSettings:
    """Ranking levers from the ``[ranking]`` configuration table (used by measurement runs)."""
    if not raw:
        return RankingSettings()
    check_table(raw, RANKING_KEYS, "[ranking]")
    fields = dict(raw)
    defaults = FieldWeights()
    weights = FieldWeights(
        body=float(fields.pop("body_weight", defaults.body)),
        heading=float(fields.pop("heading_weight", defaults.heading)),
        path=float(fields.pop("path_weight", defaults.path)),
    )
    if "docs_path_weight" in fields:
        weights = dataclasses.replace(weights, docs_path=float(fields.pop("docs_path_weight")))
    classes = fields.pop("class_weights", None)
    settings = RankingSettings(weights=weights, **fields)
    if classes:
        merged = {**settings.class_weights, **{k: float(v) for k, v in classes.items()}}
        settings = dataclasses.replace(settings, class_weights=merged)
    return settings
