"""A Griffe extension for the API reference: a parameter whose default names a module constant
(`max_moves: int = DEFAULT_MAX_MOVES`) shows the constant's value (`= 400`), the number a
reader needs, when that value is a plain literal."""

from __future__ import annotations

import ast

import griffe


class ConstantDefaults(griffe.Extension):
    def on_function(self, *, func: griffe.Function, loader: griffe.GriffeLoader, **kwargs) -> None:
        for parameter in func.parameters:
            default = parameter.default
            if not isinstance(default, griffe.ExprName):
                continue
            try:
                target = loader.modules_collection[default.canonical_path]
                while target.is_alias:
                    target = target.final_target
            except (KeyError, griffe.AliasResolutionError, griffe.CyclicAliasError):
                continue  # a name from a package that is not loaded: left as written
            if not target.is_attribute or target.value is None:
                continue
            value = str(target.value)
            try:
                ast.literal_eval(value)
            except (ValueError, SyntaxError):
                continue  # an expression (2**17, a call): left as the constant's name
            parameter.default = value
