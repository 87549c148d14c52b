"""The query engine (layer L3): user SQL in Lance's dialect parsed and evaluated over Arrow
batches (DataFusion, or Arrow kernels for simple filters), row predicates, the projection
engine of ``add_columns`` and SQL projections, and what an expression must give in its place."""

from .arrow_filters import expression_columns
from .engine_text import float_text, is_float_to_text
from .expressions import MatchCondition, SqlExpression, referenced_columns
from .kernels import compile_filter
from .literals import check_filter_literals, int_fits
from .predicate import Predicate
from .projection import ColumnExpression, is_null_cast, stored_type
from .results import cast_update_value, check_boolean_result, check_update_value, empty_batch
from .sql_dialect import referenced_names, to_datafusion
from .sql_parse import CHUNK, MAX_DEPTH, MAX_TERMS, parse_expression

__all__ = [
    "to_datafusion",
    "referenced_names",
    "parse_expression",
    "MAX_TERMS",
    "MAX_DEPTH",
    "CHUNK",
    "check_filter_literals",
    "int_fits",
    "compile_filter",
    "SqlExpression",
    "MatchCondition",
    "referenced_columns",
    "expression_columns",
    "Predicate",
    "ColumnExpression",
    "is_null_cast",
    "stored_type",
    "check_boolean_result",
    "check_update_value",
    "cast_update_value",
    "empty_batch",
    "float_text",
    "is_float_to_text",
]
