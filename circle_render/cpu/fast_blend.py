"""cpu-fast's one blend of a run of RGBA pixels, written as vector code: numba leaves LLVM's SLP
vectoriser off, and its loop vectoriser turns the four-channel pixel loop into de-interleaving
shuffles, and only on runs of 32 pixels or more: shorter runs, most rows of 1M circles at 1024,
ran one channel at a time (docs/perf-notes.md, "cpu-fast").

``blend_pixels`` computes each float as v <- add[c] + scale[c] * v (c: its channel), 16 floats
(4 pixels) a vector step, the last step masked so that no float outside the run is read or
written (tiles of other threads may lie beside it). Each lane is one float32 multiply then one
add, the operations the scalar loops did, without fast-math (no fused multiply-add): the same
bits. On a CPU without 512-bit vectors LLVM splits the vectors (AVX2: two halves, masked moves);
where there are no masked moves (AArch64's NEON) it tests the last step's lanes one by one:
the same bits, its speed there not measured.
"""
from __future__ import annotations

from typing import Any

import llvmlite.ir as llvm_ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

LANES = 16                   # floats a vector step: 4 RGBA pixels
I32, F32 = llvm_ir.IntType(32), llvm_ir.FloatType()
VECTOR = llvm_ir.VectorType(F32, LANES)


def _repeated(builder: Any, four: Any) -> Any:
    """A vector of LANES floats: the 4-tuple ``four`` (one value a channel) over and over."""
    vector = llvm_ir.Constant(VECTOR, llvm_ir.Undefined)
    for lane in range(LANES):
        vector = builder.insert_element(vector, builder.extract_value(four, lane % 4), llvm_ir.Constant(I32, lane))
    return vector


def _step(builder: Any, at: Any, adds: Any, scales: Any, floats: Any = None) -> None:
    """v <- adds + scales * v over the vector at ``at``: all of it, or (``floats``, intp) its
    first ``floats`` lanes only, LLVM's masked load and store (no other lane touched)."""
    at = builder.bitcast(at, llvm_ir.PointerType(VECTOR))
    if floats is None:
        builder.store(builder.fadd(adds, builder.fmul(scales, builder.load(at, align=4))), at, align=4)
        return
    vector_i32 = llvm_ir.VectorType(I32, LANES)
    limit = builder.insert_element(llvm_ir.Constant(vector_i32, llvm_ir.Undefined), builder.trunc(floats, I32),
                                   llvm_ir.Constant(I32, 0))
    limit = builder.shuffle_vector(limit, limit, llvm_ir.Constant(vector_i32, [0] * LANES))
    mask = builder.icmp_signed("<", llvm_ir.Constant(vector_i32, list(range(LANES))), limit)
    align = llvm_ir.Constant(I32, 4)
    value = _masked(builder, "load", VECTOR, [at, align, mask, llvm_ir.Constant(VECTOR, llvm_ir.Undefined)])
    _masked(builder, "store", llvm_ir.VoidType(), [builder.fadd(adds, builder.fmul(scales, value)), at, align, mask])


def _masked(builder: Any, name: str, returns: Any, arguments: list[Any]) -> Any:
    """A call of LLVM's masked load or store of one vector (no lane outside the mask touched)."""
    function = cgutils.get_or_insert_function(builder.module, llvm_ir.FunctionType(
        returns, [a.type for a in arguments]), f"llvm.masked.{name}.v{LANES}f32.p0")
    return builder.call(function, arguments)


def _blend_pixels(typingctx: Any, row: Any, start: Any, count: Any, add: Any, scale: Any) -> Any:
    """row[start + 4p + c] <- add[c] + scale[c] * row[start + 4p + c] for the pixels p in [0,
    count) (none where count <= 0), channel c = 0..3, in float32: row (m,) float32 C-contiguous,
    start the index of the run's first float (a multiple of 4), add and scale 4 float32 each."""
    four = types.UniTuple(types.float32, 4)
    if not (isinstance(row, types.Array) and row.dtype == types.float32 and row.ndim == 1 and row.layout == "C"
            and isinstance(start, types.Integer) and isinstance(count, types.Integer) and add == four
            and scale == four):
        return None

    def codegen(context: Any, builder: Any, sig: Any, args: Any) -> Any:
        array, first, pixels, adds, scales = args
        intp = context.get_value_type(types.intp)
        data = context.make_array(sig.args[0])(context, builder, array).data
        run = builder.gep(data, [context.cast(builder, first, sig.args[1], types.intp)])
        floats = builder.mul(context.cast(builder, pixels, sig.args[2], types.intp), intp(4))
        adds, scales = _repeated(builder, adds), _repeated(builder, scales)
        # whole vectors while LANES floats are left, then the rest masked; a loop LLVM leaves as
        # it is (counted first, as cgutils.for_range does, it was unrolled: slower on short runs)
        done = cgutils.alloca_once_value(builder, intp(0))
        test, step, rest = (builder.append_basic_block(f"blend.{n}") for n in ("test", "step", "rest"))
        builder.branch(test)
        builder.position_at_end(test)
        at = builder.load(done)
        builder.cbranch(builder.icmp_signed("<=", builder.add(at, intp(LANES)), floats), step, rest)
        builder.position_at_end(step)
        _step(builder, builder.gep(run, [at]), adds, scales)
        builder.store(builder.add(at, intp(LANES)), done)
        builder.branch(test)
        builder.position_at_end(rest)
        _step(builder, builder.gep(run, [at]), adds, scales, builder.sub(floats, at))   # < LANES; <= 0: none
        return context.get_dummy_value()

    return types.void(row, start, count, add, scale), codegen


blend_pixels: Any = intrinsic(_blend_pixels)     # called from numba code as blend_pixels(row, start, count, add, scale)
