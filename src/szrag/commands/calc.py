"""A safe arithmetic evaluator for the ``calc`` command.

The expression is parsed with the ``ast`` module and walked node by node; only numbers,
the operators + - * / // % ** (``^`` is read as a power), parentheses, a few named constants
and a few math functions are accepted. Nothing is ever passed to ``eval``. Results that would
take unbounded time or memory (huge powers, giant integers) are refused.
"""

from __future__ import annotations

import ast
import math
import operator
from collections.abc import Callable
from typing import Any

MAX_EXPRESSION_CHARS = 500
MAX_INT_BITS = 10_000
MAX_DEPTH = 100
MAX_FACTORIAL = 500

Number = int | float


class CalcError(ValueError):
    """An expression that cannot be evaluated; the message says why."""


def _checked_pow(base: Number, exponent: Number) -> Number:
    if (
        isinstance(base, int)
        and isinstance(exponent, int)
        and exponent > 0
        and abs(base) > 1
        and exponent * base.bit_length() > MAX_INT_BITS
    ):
        raise CalcError("result too large")
    return pow(base, exponent)


def _factorial(value: Number) -> int:
    if isinstance(value, float):
        if not value.is_integer():
            raise CalcError("factorial needs a whole number")
        value = int(value)
    if not 0 <= value <= MAX_FACTORIAL:
        raise CalcError(f"factorial takes 0 to {MAX_FACTORIAL}")
    return math.factorial(value)


_BINARY: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: _checked_pow,
}
_UNARY: dict[type[ast.unaryop], Callable[[Any], Any]] = {
    ast.UAdd: operator.pos,
    ast.USub: operator.neg,
}
_CONSTANTS: dict[str, float] = {"pi": math.pi, "e": math.e, "tau": math.tau}
_FUNCTIONS: dict[str, Callable[..., Any]] = {
    "abs": abs,
    "round": round,
    "min": min,
    "max": max,
    "sqrt": math.sqrt,
    "floor": math.floor,
    "ceil": math.ceil,
    "exp": math.exp,
    "log": math.log,
    "log2": math.log2,
    "log10": math.log10,
    "sin": math.sin,
    "cos": math.cos,
    "tan": math.tan,
    "factorial": _factorial,
}
_MAX_ARGS = 20


def _normalise(expression: str) -> str:
    return expression.replace("^", "**").replace("×", "*").replace("÷", "/").replace("−", "-")


def _check_size(value: Number) -> Number:
    if isinstance(value, int) and value.bit_length() > MAX_INT_BITS:
        raise CalcError("result too large")
    return value


def _evaluate(node: ast.AST, depth: int) -> Number:
    if depth > MAX_DEPTH:
        raise CalcError("expression nested too deeply (or too many terms)")
    if isinstance(node, ast.Expression):
        return _evaluate(node.body, depth + 1)
    if isinstance(node, ast.Constant):
        if isinstance(node.value, bool) or not isinstance(node.value, int | float):
            raise CalcError(f"unsupported value {node.value!r}")
        return node.value
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left = _evaluate(node.left, depth + 1)
        right = _evaluate(node.right, depth + 1)
        result = _BINARY[type(node.op)](left, right)
        if isinstance(result, complex):
            raise CalcError("the result is not a real number")
        return _check_size(result)
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _check_size(_UNARY[type(node.op)](_evaluate(node.operand, depth + 1)))
    if isinstance(node, ast.Name):
        if node.id in _CONSTANTS:
            return _CONSTANTS[node.id]
        raise CalcError(f"unknown name {node.id!r}")
    if isinstance(node, ast.Call):
        return _call(node, depth)
    raise CalcError(f"unsupported syntax: {type(node).__name__}")


def _call(node: ast.Call, depth: int) -> Number:
    if not isinstance(node.func, ast.Name) or node.func.id not in _FUNCTIONS:
        name = node.func.id if isinstance(node.func, ast.Name) else "this"
        raise CalcError(f"unknown function {name!r}; known: {', '.join(sorted(_FUNCTIONS))}")
    if node.keywords or len(node.args) > _MAX_ARGS:
        raise CalcError(f"{node.func.id}() takes up to {_MAX_ARGS} plain arguments")
    args = [_evaluate(arg, depth + 1) for arg in node.args]
    result = _FUNCTIONS[node.func.id](*args)
    if not isinstance(result, int | float) or isinstance(result, bool):
        raise CalcError(f"{node.func.id}() did not give a number")
    return _check_size(result)


def evaluate(expression: str) -> Number:
    """The value of an arithmetic expression such as ``(2 + 3) * 4 ^ 2 / sqrt(16)``."""
    expression = expression.strip()
    if not expression:
        raise CalcError("nothing to calculate")
    if len(expression) > MAX_EXPRESSION_CHARS:
        raise CalcError(f"expression longer than {MAX_EXPRESSION_CHARS} characters")
    try:
        tree = ast.parse(_normalise(expression), mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        raise CalcError(f"cannot read {expression!r} as arithmetic") from None
    try:
        return _evaluate(tree, 0)
    except ZeroDivisionError:
        raise CalcError("division by zero") from None
    except OverflowError:
        raise CalcError("result too large") from None
    except (ValueError, TypeError) as error:
        if isinstance(error, CalcError):
            raise
        raise CalcError(f"math error: {error}") from None


def format_number(value: Number) -> str:
    """A result as people write it: ``5`` rather than ``5.0``, twelve significant digits."""
    if isinstance(value, int):
        return str(value)
    if math.isfinite(value) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    return format(value, ".12g")
