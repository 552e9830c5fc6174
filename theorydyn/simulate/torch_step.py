"""The simulator's fused step on torch (CPU or CUDA): the same risk, gradients and forward map as the
Numba kernel (:mod:`theorydyn.simulate._kernel`), for ``simulate(..., device="cpu" | "cuda")``.

Per replica r (docs/theory.md §2; the kernel's docstring has the derivation), on X (N, D, d):

    S = row-softmax(Â/τ),  U = X v (N, D),  H = U Sᵀ,  F_n = Σ_i σ(H_ni),  σ(x) = x^p + ν x,
    m_n = y_n F_n,  risk = Σ_n w_n ℓ(m_n),  ℓ(m) = log(1 + e^{−m}),  c_n = −y_n w_n / (1 + e^{m_n}),
    G = c σ'(H),  ∂risk/∂S = Gᵀ U,  ∇_v = Σ_{n,j} (G S)_nj X_nj,
    ∂risk/∂Â_ik = (1/τ) S_ik (∂S_ik − Σ_j S_ij ∂S_ij) (i ≠ k; the diagonal is not trained).

Where the work is done: the N-dependent part (U, H, the loss, G, G S, Gᵀ U, ∇_v: everything that reads
X) on the device, over chunks of samples; S and the softmax backward (R·D² numbers) on the host by the
Numba kernel's own :func:`softmax_rows` / :func:`softmax_backward`, so those bits are the Numba path's.
X is moved to the device once (on CPU, ``torch.from_numpy`` shares X's memory: no copy).

Arithmetic, as the Numba kernel's. Float64 X: all float64. Float32 X: U, H, G S, Gᵀ U and ∇_v's
product in float32 within a chunk; σ, F, the loss and c σ'(H) in float64 per sample, G rounded to
float32; the sums over chunks (∂S, ∇_v, risk, error) accumulated in float64. A chunk is larger than
the kernel's ~1 MB sub-block (:data:`CHUNK_ELEMS` numbers of X; :data:`CUDA_CHUNK_ELEMS` on CUDA), so
in float32 the in-chunk sums of ∂S and ∇_v run over more samples: the float32 results differ from
the Numba path's at float32 rounding (~1e-7 relative), and in float64 at float64 rounding
(summation order: ~1e-15 relative a step).
On CUDA, float32 products may use TF32 where torch allows it (``torch.backends.cuda.matmul.allow_tf32``,
off by default): leave it off for agreement at float32 rounding.

torch is the optional extra ``vision`` (``pip install 'theorydyn[vision]'``): imported on first use.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ._kernel import replica_flags, sample_counts, softmax_backward, softmax_rows

__all__ = ["TorchModel", "import_torch", "resolve_device", "CHUNK_ELEMS", "CUDA_CHUNK_ELEMS"]

#: Numbers of X per chunk on CPU (2²⁴: 64 MB of float32): the temporaries (U, H, G: R·chunk·D each)
#: stay a small multiple of N·D / d.
CHUNK_ELEMS = 1 << 24
#: On CUDA (2²⁸: 1 GiB of float32): few chunks a step, so the ~20 kernel launches of a chunk (a few µs
#: each) stay small against its read of X (~0.3 ms at 3 TB/s); temporaries 2²⁸/d numbers each.
CUDA_CHUNK_ELEMS = 1 << 28


def import_torch() -> Any:
    """torch, or ImportError saying how to install it (the optional extra ``vision``)."""
    try:
        import torch
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError(
            "the torch simulator (device='cpu' or 'cuda') needs torch: pip install 'theorydyn[vision]'"
        ) from e
    return torch


def resolve_device(device: str) -> Any:
    """A torch.device for ``"cpu"``, ``"cuda"`` or ``"cuda:<k>"``; ValueError naming ``device`` when it is
    none of these or CUDA is asked for and absent."""
    if not isinstance(device, str) or not (device == "cpu" or device == "cuda" or device.startswith("cuda:")):
        raise ValueError(f"device must be 'cpu-numba', 'cpu', 'cuda' or 'cuda:<k>', got {device!r}")
    torch = import_torch()
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise ValueError(f"device={device!r}: torch sees no CUDA device")
    return torch.device(device)


class TorchModel:
    """:class:`theorydyn.simulate._kernel.FusedModel`'s contract (risk, error, ∂Â, ∇_v and the forward
    map for R replicas on a fixed X) on a torch device.

    Args:
        X: (N, D, d) float32 or float64, C-contiguous; y: (N,) in {−1, +1} or None;
        p, nu, tau: the activation's degree and linear part, the softmax temperature;
        weights: optional (N,) non-negative sample weights (normalised), None → 1/N;
        device: ``"cpu"``, ``"cuda"`` or ``"cuda:<k>"``.
    """

    def __init__(
        self,
        X: np.ndarray,
        y: np.ndarray | None,
        p: int,
        nu: float,
        tau: float,
        weights: np.ndarray | None = None,
        device: str = "cpu",
    ):
        torch = import_torch()
        self.torch = torch
        self.device = resolve_device(device)
        X = np.asarray(X)
        if X.ndim != 3 or X.dtype not in (np.float32, np.float64) or not X.flags.c_contiguous:
            raise ValueError(f"X must be a C-contiguous (N, D, d) float32/float64 array, got {X.shape} {X.dtype}")
        self.N, self.D, self.d = X.shape
        self.p, self.nu, self.tau = int(p), float(nu), float(tau)
        self.dt = torch.float32 if X.dtype == np.float32 else torch.float64
        self.X = torch.from_numpy(X).to(self.device)  # on CPU: X's own memory
        elems = CUDA_CHUNK_ELEMS if self.device.type == "cuda" else CHUNK_ELEMS
        self.chunk = max(1, elems // (self.D * self.d))
        f64 = dict(dtype=torch.float64, device=self.device)
        self.y = None
        if y is not None:
            y = np.asarray(y, dtype=np.float64)
            if y.shape != (self.N,):
                raise ValueError(f"y must have shape (N,)=({self.N},), got {y.shape}")
            self.y = torch.as_tensor(y, **f64)
        self.uniform = weights is None
        self._W_key: tuple[int, ...] | None = None  # the per-replica weights of the last counts (_weights)
        self._W: Any = None
        if weights is None:
            self.w = torch.full((self.N,), 1.0 / self.N, **f64)
        else:
            w = np.asarray(weights, dtype=np.float64)
            if w.shape != (self.N,) or np.any(w < 0) or not w.sum() > 0:
                raise ValueError("weights must be a non-negative (N,) array with a positive sum")
            self.w = torch.as_tensor(w / w.sum(), **f64)

    def sample_counts(self, n: Sequence[int] | None, R: int) -> np.ndarray:
        """:func:`theorydyn.simulate._kernel.sample_counts` for this X."""
        return sample_counts(n, R, self.N, uniform=self.uniform)

    def _weights(self, n: Sequence[int] | None, R: int):
        """The sample weights of :meth:`risk_grad`: ``self.w`` (N,), or with per-replica counts ``n`` an
        (R, N) tensor, 1/n[r] on replica r's first n[r] samples and 0 after (rules as FusedModel's)."""
        if n is None:
            return self.w
        key = tuple(self.sample_counts(n, R).tolist())
        if self._W_key != key:  # a run asks for the same counts every step (until a replica dies): built once
            W = np.zeros((R, self.N))
            for r, k in enumerate(key):
                W[r, :k] = 1.0 / k
            self._W_key, self._W = key, self.torch.as_tensor(W, dtype=self.torch.float64, device=self.device)
        return self._W

    def _sigma(self, H):
        """(σ(H), σ'(H)) in H's dtype, the power a product of p − 1 factors left to right (as
        :func:`theorydyn.core.numba_activation.sigma_and_grad`)."""
        xp1 = H
        for _ in range(self.p - 2):
            xp1 = xp1 * H
        return xp1 * H + self.nu * H, self.p * xp1 + self.nu

    def risk_grad(
        self,
        A: np.ndarray,
        V: np.ndarray,
        grad_A: bool | Sequence[bool] = True,
        grad_v: bool | Sequence[bool] = True,
        n: Sequence[int] | None = None,
    ):
        """As :meth:`FusedModel.risk_grad`: A (R, D, D), V (d, R) → risk (R,), err (R,), grad_A
        (R, D, D) zero diagonal, grad_V (d, R), float64 NumPy; a skipped gradient comes back zero.
        ``n``: replica r's risk is the mean over the first n[r] samples (weight 1/n[r], zero after)."""
        torch = self.torch
        if self.y is None:
            raise ValueError("risk_grad needs labels y")
        A = np.ascontiguousarray(A, dtype=np.float64)
        S = softmax_rows(A, self.tau)
        R, D, d = A.shape[0], self.D, self.d
        fA, fv = replica_flags(grad_A, R).astype(bool), replica_flags(grad_v, R).astype(bool)
        W = self._weights(n, R)  # (N,) shared, or (R, N) per replica
        iA = None if fA.all() else torch.as_tensor(np.flatnonzero(fA), device=self.device)
        iv = None if fv.all() else torch.as_tensor(np.flatnonzero(fv), device=self.device)
        St = torch.as_tensor(S, device=self.device).to(self.dt)  # (R, D, D)
        STt = St.transpose(1, 2)
        Vt = torch.as_tensor(np.ascontiguousarray(V, dtype=np.float64), device=self.device).to(self.dt)  # (d, R)
        f64 = dict(dtype=torch.float64, device=self.device)
        dS = torch.zeros((R, D, D), **f64)
        gV = torch.zeros((R, d), **f64)
        risk = torch.zeros(R, **f64)
        err = torch.zeros(R, **f64)
        for a in range(0, self.N, self.chunk):
            b = min(self.N, a + self.chunk)
            n = b - a
            Xf = self.X[a:b].reshape(n * D, d)
            U = (Xf @ Vt).reshape(n, D, R).permute(2, 0, 1)  # (R, n, D)
            H = torch.bmm(U, STt).to(torch.float64)  # (R, n, D), formed in X's dtype
            sig, dsig = self._sigma(H)
            ya, wa = self.y[a:b], W[..., a:b]
            m = ya * sig.sum(dim=2)  # (R, n)
            e = torch.exp(-torch.abs(m))
            risk += (wa * (torch.clamp(-m, min=0.0) + torch.log1p(e))).sum(dim=1)
            dl = torch.where(m >= 0, wa * e / (1.0 + e), wa / (1.0 + e))
            err += torch.where(m > 0, 0.0, wa).sum(dim=1)  # a NaN margin counts as wrong
            G = ((-ya * dl)[:, :, None] * dsig).to(self.dt)  # (R, n, D)
            if iA is None:
                dS += torch.bmm(G.transpose(1, 2), U).to(torch.float64)
            elif len(iA):  # only the replicas whose Â is trained
                dS[iA] += torch.bmm(G[iA].transpose(1, 2), U[iA]).to(torch.float64)
            if iv is None:
                gV += (torch.bmm(G, St).reshape(R, n * D) @ Xf).to(torch.float64)
            elif len(iv):
                gV[iv] += (torch.bmm(G[iv], St[iv]).reshape(len(iv), n * D) @ Xf).to(torch.float64)
        risk_n, err_n = risk.cpu().numpy(), err.cpu().numpy()
        gA = softmax_backward(S, dS.cpu().numpy(), self.tau) if fA.any() else np.zeros_like(S)
        gA[~fA] = 0.0
        return risk_n, err_n, gA, np.ascontiguousarray(gV.cpu().numpy().T)

    def forward(self, A: np.ndarray, V: np.ndarray) -> np.ndarray:
        """F_{A,v}(X) per replica in float64 whatever X's dtype (as :meth:`FusedModel.forward`).
        A (R, D, D), V (d, R) → F (N, R)."""
        torch = self.torch
        A = np.ascontiguousarray(A, dtype=np.float64)
        S = softmax_rows(A, self.tau)
        STt = torch.as_tensor(S, device=self.device).transpose(1, 2)
        Vt = torch.as_tensor(np.ascontiguousarray(V, dtype=np.float64), device=self.device)
        R, D, d = A.shape[0], self.D, self.d
        out = []
        for a in range(0, self.N, self.chunk):
            b = min(self.N, a + self.chunk)
            n = b - a
            U = (self.X[a:b].reshape(n * D, d).to(torch.float64) @ Vt).reshape(n, D, R).permute(2, 0, 1)
            out.append(self._sigma(torch.bmm(U, STt))[0].sum(dim=2).T)  # (n, R)
        return torch.cat(out).cpu().numpy()
