"""Typed pointers from addresses, for compiled code handed raw memory (an FMU's
instance record in fmu/native.py, PyElastica's rod arrays in plugins/elastica.py):
``carray(f64_ptr(addr), shape)`` views the memory at ``addr`` as float64 without a copy.
The caller keeps the memory alive for as long as the view is used."""
from numba import types
from numba.extending import intrinsic


def _ptr(elem):
    def ptr(typingctx, addr):
        if not isinstance(addr, types.Integer):
            return None
        sig = types.CPointer(elem)(addr)

        def codegen(context, builder, signature, args):
            a = context.cast(builder, args[0], signature.args[0], types.intp)
            return builder.inttoptr(a, context.get_value_type(signature.return_type))
        return sig, codegen
    return ptr


f64_ptr = intrinsic(_ptr(types.float64))
f64_ptr.__doc__ = "The float64 pointer at address ``addr`` (an integer)."
i64_ptr = intrinsic(_ptr(types.int64))
i64_ptr.__doc__ = "The int64 pointer at address ``addr`` (an integer)."
