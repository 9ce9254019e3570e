"""A plain fp32 PyTorch reference for ragged (packed-sequence) prefill attention.

It is deliberately naive (one sequence at a time, full score matrices) so that it shares no code
path, no tiling and no planning with FlashInfer: it is the ground truth the smoke harness compares
FlashInfer's output against. torch is imported lazily so that importing this module never needs it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import torch


def ragged_prefill_reference(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    qo_seq_lens: Sequence[int],
    kv_seq_lens: Sequence[int] | None = None,
    *,
    causal: bool = True,
    sm_scale: float | None = None,
) -> torch.Tensor:
    """Attention over a packed batch, computed in fp32.

    Layout is FlashInfer's ragged "NHD": q is ``[sum(qo_seq_lens), Hq, Dqk]``, k is
    ``[sum(kv_seq_lens), Hkv, Dqk]``, v is ``[sum(kv_seq_lens), Hkv, Dvo]``; the result is
    ``[sum(qo_seq_lens), Hq, Dvo]`` in float32. Dqk may differ from Dvo (MLA prefill: 192 and
    128). With ``Hq > Hkv`` (GQA), query head ``h`` reads kv head ``h // (Hq // Hkv)``, which is
    FlashInfer's grouping.

    The causal mask is aligned bottom-right, as FlashInfer aligns it: query ``i`` of a sequence
    sees keys ``j <= i + (kv_len - qo_len)``, so the last query sees every key. When
    ``qo_len == kv_len`` this is the ordinary lower-triangular mask.
    """
    import torch

    if kv_seq_lens is None:
        kv_seq_lens = qo_seq_lens
    qo_seq_lens = [int(n) for n in qo_seq_lens]
    kv_seq_lens = [int(n) for n in kv_seq_lens]
    if len(qo_seq_lens) != len(kv_seq_lens):
        raise ValueError(
            f"{len(qo_seq_lens)} query sequences but {len(kv_seq_lens)} key/value sequences"
        )
    if q.dim() != 3 or k.dim() != 3 or v.dim() != 3:
        raise ValueError("q, k and v must be 3-D [tokens, heads, head_dim] (NHD layout)")
    if q.shape[0] != sum(qo_seq_lens):
        raise ValueError(f"q has {q.shape[0]} tokens, the sequence lengths sum to {sum(qo_seq_lens)}")
    if k.shape[0] != sum(kv_seq_lens) or v.shape[0] != sum(kv_seq_lens):
        raise ValueError(
            f"k/v have {k.shape[0]}/{v.shape[0]} tokens, the sequence lengths sum to {sum(kv_seq_lens)}"
        )
    num_qo_heads, head_dim_qk = q.shape[1], q.shape[2]
    num_kv_heads = k.shape[1]
    if k.shape[2] != head_dim_qk or v.shape[1] != num_kv_heads:
        raise ValueError(f"inconsistent shapes: q {tuple(q.shape)}, k {tuple(k.shape)}, v {tuple(v.shape)}")
    if num_qo_heads % num_kv_heads:
        raise ValueError(f"{num_qo_heads} query heads is not a multiple of {num_kv_heads} kv heads")
    group = num_qo_heads // num_kv_heads
    scale = sm_scale if sm_scale is not None else 1.0 / math.sqrt(head_dim_qk)

    out = torch.empty((q.shape[0], num_qo_heads, v.shape[2]), dtype=torch.float32, device=q.device)
    qo_start = kv_start = 0
    for qo_len, kv_len in zip(qo_seq_lens, kv_seq_lens):
        if causal and qo_len > kv_len:
            # The first queries would see no key at all; FlashInfer never plans such a batch for
            # prefill, and a softmax over an empty row has no meaningful value to compare with.
            raise ValueError(f"causal attention needs kv_len >= qo_len, got {qo_len} > {kv_len}")
        qi = q[qo_start : qo_start + qo_len].float()
        ki = k[kv_start : kv_start + kv_len].float().repeat_interleave(group, dim=1)
        vi = v[kv_start : kv_start + kv_len].float().repeat_interleave(group, dim=1)
        scores = torch.einsum("qhd,khd->hqk", qi, ki) * scale
        if causal:
            rows = torch.arange(qo_len, device=q.device)[:, None]
            cols = torch.arange(kv_len, device=q.device)[None, :]
            scores = scores.masked_fill(cols > rows + (kv_len - qo_len), float("-inf"))
        probs = torch.softmax(scores, dim=-1)
        out[qo_start : qo_start + qo_len] = torch.einsum("hqk,khd->qhd", probs, vi)
        qo_start += qo_len
        kv_start += kv_len
    return out
