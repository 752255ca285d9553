"""The CTL models of Csordás et al. 2021's Table 1 (docs/csordas2021.md): one layer applied n_layers times.

* ``Transformer``: the registry's softmax attention (``RegistryMixer``, initialised as the release's
  ``nn.MultiheadAttention``), absolute sinusoidal positions (+ dropout 0.1), post-LN layer;
* ``+ rel``: Transformer-XL-style relative attention, post-LN layer;
* ``+ rel + gate`` / ``+ abs/rel + gate``: the copy-gated layer with a tanh update (``NDRResidual``),
  relative attention, the latter with the per-head abs/rel switch;
* ``+ geom. att.``: row-normalised geometric attention in a post-LN layer;
* ``NDR``: geometric attention (unnormalised) + the copy gate with a LayerNorm update + gate dropout;
* ``LSTM``: the recurrent baseline (embedding 16, one layer of 200).

Every Transformer variant reads out the EOS column (``length - 1``) through Linear(d, 8). Every attention is
called through the mixer interface of ``trainables.mixers.base``, ``attention(x, mask)`` with the key-padding
mask (True = real token), so no real token attends to padding. Layers record their attention weights / gate
activations when ``record`` is set (the probe figures).
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from trainables.csordas2021.ctl import MAX_INPUT_LEN, N_SYMBOLS, VOCAB_SIZE
from trainables.mixers.base import Mixer, allowed_keys
from trainables.mixers.softmax import softmax_weights


def sinusoid(positions: torch.Tensor, d_model: int) -> torch.Tensor:
    """Sinusoidal encodings (P, d) of (possibly negative) positions: sin on even dims, cos on odd, base 1e4."""
    device = positions.device  # the relative offsets live on the model's device (a CPU `inv` would not mix)
    dtype = torch.get_default_dtype()  # float32, or float64 in an fp64 run
    inv = torch.exp(torch.arange(0, d_model, 2, dtype=dtype, device=device) * (-math.log(10000.0) / d_model))
    angles = positions.to(dtype).view(-1, 1) * inv.view(1, -1)  # (P, d/2)
    pe = torch.zeros(positions.numel(), d_model, device=device)
    pe[:, 0::2] = torch.sin(angles)
    pe[:, 1::2] = torch.cos(angles[:, : d_model // 2])
    return pe


class RegistryMixer(nn.Module):
    """A mixer of ``trainables.mixers.MIXERS`` as a CTL attention: the plain Transformer's own (``softmax``,
    initialised as the release's ``nn.MultiheadAttention``) or one in its place (the cross-paper atlas study).

    The mixer gets the batch's key-padding mask, so no real token's output depends on padding. ``torch_mha_init``
    also returns the output in ``nn.MultiheadAttention``'s memory layout (see ``forward``). Mixers with
    parameters per position (bilinear: an N x N matrix) are built for the longest CTL input and see every batch
    zero-padded to that length, the extra positions masked as well.
    """

    def __init__(self, name: str, d_model: int, n_heads: int, *, dropout: float = 0.0,
                 torch_mha_init: bool = False) -> None:
        super().__init__()
        from trainables.mixers import MIXERS

        cls = MIXERS.get(name)
        cls.require(mask=True)
        self.seq_len = MAX_INPUT_LEN if getattr(cls, "fixed_length", False) else None
        self.mixer = (mha_initialised_softmax(d_model, n_heads, dropout) if torch_mha_init else
                      build_registry_mixer(name, d_model, n_heads, dropout))
        self.token_major = torch_mha_init
        self.record = False
        self.last_weights: torch.Tensor | None = None

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """x (B, N, d), mask (B, N) True at real tokens -> (B, N, d)."""
        n = x.shape[1]
        if self.seq_len is not None:
            x = F.pad(x, (0, 0, 0, self.seq_len - n))  # (B, seq_len, d)
            mask = F.pad(mask, (0, self.seq_len - n), value=False)  # (B, seq_len)
        if self.record and hasattr(self.mixer, "attention_weights"):
            self.last_weights = self.mixer.attention_weights(x, mask).detach()[..., :n, :n]
        out = self.mixer(x, mask)[:, :n]  # (B, N, d)
        if self.token_major:
            # nn.MultiheadAttention returns (N, B, d) in memory, and the layer's dropout draws its mask in memory
            # order: the same layout keeps the release Transformer's dropout masks, so its results, bit for bit.
            out = out.transpose(0, 1).contiguous().transpose(0, 1)
        return out


def build_registry_mixer(name: str, d_model: int, n_heads: int, dropout: float) -> nn.Module:
    """The registry mixer ``name`` as the CTL layer uses it (no MTE switches; bilinear at the longest input)."""
    from trainables.mixers import build_mixer

    return build_mixer(name, d_model, n_heads, hidden_norm=False, attention_gelu=False, dropout=dropout,
                       options={"seq_len": MAX_INPUT_LEN})


def mha_initialised_softmax(d_model: int, n_heads: int, dropout: float) -> nn.Module:
    """The registry's ``softmax`` mixer with the weights torch's ``nn.MultiheadAttention`` starts with.

    The release's plain Transformer uses that module; building the mixer on the meta device draws nothing, and
    the module built next draws what it always drew (its in-projection is Xavier, biases 0), so the model's
    later layers are initialised as before. Its (3d, d) in-projection has the registry's q; k; v row layout.
    """
    with torch.device("meta"):
        mixer = build_registry_mixer("softmax", d_model, n_heads, dropout)
    mixer.to_empty(device="cpu")
    reference = nn.MultiheadAttention(d_model, n_heads, dropout=dropout, batch_first=True)
    with torch.no_grad():
        mixer.qkv.weight.copy_(reference.in_proj_weight)
        mixer.qkv.bias.copy_(reference.in_proj_bias)
        mixer.mix.weight.copy_(reference.out_proj.weight)
        mixer.mix.bias.copy_(reference.out_proj.bias)
    return mixer


class RelativeAttention(Mixer):
    """Transformer-XL-style relative attention (docs/csordas2021.md), optionally with the per-head abs/rel switch.

    logits_ij = s * [(q_i + u)^T Drop(k_j) + (q_i + v)^T Drop(W_r PE(j - i))], s learned (init 1/sqrt(d_h)),
    weighted by the registry's masked softmax. With ``abs_gate`` the position term is
    r_i * rel + (1 - r_i) * (q_i + v)^T W_r PE(j) with r_i = sigmoid(w_r^T x_i + b_r) per head.

    The mixer interface (``forward(x, mask, causal=...)``) for one model (B, N, d): the CTL family trains its
    seeds one at a time, so its own attentions are not written for stacked members.
    """

    supports_mask = True
    supports_causal = True

    def __init__(self, d_model: int, n_heads: int, *, dropout: float = 0.0, abs_gate: bool = False) -> None:
        super().__init__(d_model, n_heads)
        self.split_into_heads()
        self.q = nn.Linear(d_model, d_model, bias=False)
        self.kv = nn.Linear(d_model, 2 * d_model, bias=False)
        self.r = nn.Linear(d_model, d_model, bias=False)
        self.out = nn.Linear(d_model, d_model)
        for w in (self.q.weight, self.kv.weight, self.r.weight):
            nn.init.xavier_uniform_(w)
        self.u = nn.Parameter(torch.zeros(n_heads, 1, self.d_head))
        self.v = nn.Parameter(torch.zeros(n_heads, 1, self.d_head))
        self.scale = nn.Parameter(torch.tensor([1.0 / math.sqrt(self.d_head)]))
        self.abs_switch = nn.Linear(d_model, n_heads) if abs_gate else None
        self.dropout = dropout
        self.record = False
        self.last_weights: torch.Tensor | None = None

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None = None, *, causal: bool = False) -> torch.Tensor:
        """x (B, N, d), mask (B, N) True at real tokens -> (B, N, d)."""
        b, n, d = x.shape
        h, dh = self.n_heads, self.d_head
        q = self.q(x).view(b, n, h, dh).transpose(1, 2)  # (B, H, N, d_h)
        k, v = self.kv(x).view(b, n, 2, h, dh).permute(2, 0, 3, 1, 4).unbind(0)  # 2 x (B, H, N, d_h)
        k = F.dropout(k, self.dropout, self.training)
        offsets = torch.arange(-(n - 1), n, device=x.device)  # relative offsets j - i
        pe = sinusoid(offsets, d).to(x.device, x.dtype)  # (2N-1, d)
        r = F.dropout(self.r(pe), self.dropout, self.training).view(2 * n - 1, h, dh).transpose(0, 1)  # (H, 2N-1, d_h)
        content = (q + self.u) @ k.transpose(-2, -1)  # (B, H, N, N)
        position = (q + self.v) @ r.transpose(-2, -1)  # (B, H, N, 2N-1)
        i = torch.arange(n, device=x.device).view(n, 1)
        j = torch.arange(n, device=x.device).view(1, n)
        rel = position.gather(-1, (j - i + n - 1).expand(b, h, n, n))  # (B, H, N, N), offset j - i
        if self.abs_switch is not None:
            absolute = position.gather(-1, (j + n - 1).expand(b, h, n, n))  # (B, H, N, N), position j
            gate = torch.sigmoid(self.abs_switch(x)).transpose(1, 2).unsqueeze(-1)  # (B, H, N, 1)
            rel = gate * rel + (1 - gate) * absolute
        logits = self.scale * (content + rel)
        a = softmax_weights(logits, allowed_keys(mask, causal, n, x.device))  # (B, H, N, N)
        if self.record:
            self.last_weights = a.detach()
        return self.out((a @ v).transpose(1, 2).reshape(b, n, d))


class PostLNLayer(nn.Module):
    """attention -> +residual -> LN -> ReLU FFN -> +residual -> LN (dropout on sublayer outputs and FFN hidden)."""

    def __init__(self, attention: nn.Module, d_model: int, d_ff: int, dropout: float) -> None:
        super().__init__()
        self.attention = attention
        self.ff1, self.ff2 = nn.Linear(d_model, d_ff), nn.Linear(d_ff, d_model)
        self.ln1, self.ln2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)
        self.dropout = dropout
        self.record = False
        self.last_gates: torch.Tensor | None = None

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """x (B, N, d), mask (B, N) True at real tokens -> (B, N, d)."""
        drop = self.dropout if self.training else 0.0
        x = self.ln1(x + F.dropout(self.attention(x, mask), drop))
        hidden = F.dropout(F.relu(self.ff1(x)), drop)
        return self.ln2(x + F.dropout(self.ff2(hidden), drop))


class GatedLayer(nn.Module):
    """The copy-gated layer (docs/csordas2021.md): h' = g * u + (1 - g) * h, no residual around the update FFN.

    z = LN1(h + Drop(attention(h))); u = LN2(FFN_data(z)) (``update="ln"``, NDR) or tanh(FFN_data(z))
    (``update="tanh"``, the "+ gate" rows); g = sigmoid(FFN_gate(z)) with its output bias at -3; gate dropout
    sets the whole gate vector of a (sample, position) to 0 with probability ``gate_dropout`` while training.
    """

    def __init__(self, attention: nn.Module, d_model: int, d_ff: int, dropout: float, *, update: str,
                 gate_dropout: float = 0.0) -> None:
        super().__init__()
        if update not in ("ln", "tanh"):
            raise ValueError(f"invalid update={update!r}; allowed: ln, tanh")
        self.attention = attention
        self.ff1, self.ff2 = nn.Linear(d_model, d_ff), nn.Linear(d_ff, d_model)
        self.gate1, self.gate2 = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)
        self.ln1 = nn.LayerNorm(d_model)
        self.ln2 = nn.LayerNorm(d_model) if update == "ln" else None
        self.dropout, self.gate_dropout = dropout, gate_dropout
        nn.init.xavier_uniform_(self.ff1.weight, gain=math.sqrt(2.0))
        if update == "ln":  # NDRResidual keeps the default init of W2
            nn.init.xavier_uniform_(self.ff2.weight, gain=5.0 / 3.0)
        nn.init.xavier_uniform_(self.gate1.weight, gain=math.sqrt(2.0))
        nn.init.xavier_uniform_(self.gate2.weight, gain=1.0)
        nn.init.constant_(self.gate2.bias, -3.0)  # sigmoid(-3) ~ 0.047: layers start close to copying
        self.record = False
        self.last_gates: torch.Tensor | None = None

    def forward(self, h: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """h (B, N, d), mask (B, N) True at real tokens -> (B, N, d)."""
        drop = self.dropout if self.training else 0.0
        z = self.ln1(h + F.dropout(self.attention(h, mask), drop))
        u = self.ff2(F.dropout(F.relu(self.ff1(z)), drop))
        u = self.ln2(u) if self.ln2 is not None else torch.tanh(u)
        g = torch.sigmoid(self.gate2(F.dropout(F.relu(self.gate1(z)), drop)))  # (B, N, d)
        if self.training and self.gate_dropout > 0:
            keep = torch.rand(g.shape[:-1] + (1,), device=g.device) >= self.gate_dropout  # (B, N, 1)
            g = g * keep
        if self.record:
            self.last_gates = g.detach()
        return g * u + (1 - g) * h


class SharedLayerClassifier(nn.Module):
    """Embedding [+ sinusoidal PE + dropout 0.1] -> one layer applied n_layers times -> Linear at EOS."""

    def __init__(self, layer: nn.Module, d_model: int, n_layers: int, *, absolute_positions: bool,
                 embedding_init: str) -> None:
        super().__init__()
        self.embedding = nn.Embedding(VOCAB_SIZE, d_model)
        if embedding_init == "kaiming":
            nn.init.kaiming_normal_(self.embedding.weight)
        self.layer = layer
        self.n_layers = n_layers
        self.absolute_positions = absolute_positions
        self.d_model = d_model
        self.readout = nn.Linear(d_model, N_SYMBOLS)
        self.trace: list[dict[str, torch.Tensor]] | None = None

    def forward(self, tokens: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        """tokens (B, N), lengths (B,) -> logits (B, 8) read out at the EOS column."""
        b, n = tokens.shape
        mask = torch.arange(n, device=tokens.device).view(1, n) < lengths.view(b, 1)  # (B, N), True = real token
        x = self.embedding(tokens)  # (B, N, d)
        if self.absolute_positions:
            pe = sinusoid(torch.arange(n), self.d_model).to(x.device, x.dtype)
            x = F.dropout(x + pe, 0.1, self.training)
        for _ in range(self.n_layers):
            x = self.layer(x, mask)
            if self.trace is not None:
                attention = self.layer.attention
                self.trace.append({"attention": attention.last_weights, "gates": self.layer.last_gates})
        return self.readout(x[torch.arange(b, device=x.device), lengths - 1])

    def set_record(self, on: bool) -> None:
        """Keep each step's attention weights and gates in ``self.trace`` (a list, one dict per step)."""
        self.trace = [] if on else None
        self.layer.record = on
        self.layer.attention.record = on


class LSTMClassifier(nn.Module):
    """Embedding 16 -> Drop -> one LSTM layer -> Drop -> Linear(hidden, 8) at the EOS column."""

    def __init__(self, hidden: int, dropout: float, embedding: int = 16) -> None:
        super().__init__()
        self.embedding = nn.Embedding(VOCAB_SIZE, embedding)
        self.lstm = nn.LSTM(embedding, hidden, batch_first=True)
        self.dropout = dropout
        self.readout = nn.Linear(hidden, N_SYMBOLS)
        self.trace: list[dict[str, torch.Tensor]] | None = None

    def forward(self, tokens: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        """tokens (B, N), lengths (B,) -> logits (B, 8); unidirectional, so padding after EOS is never read."""
        x = F.dropout(self.embedding(tokens), self.dropout, self.training)
        y, _ = self.lstm(x)  # (B, N, hidden)
        y = F.dropout(y[torch.arange(tokens.shape[0], device=y.device), lengths - 1], self.dropout, self.training)
        return self.readout(y)

    def set_record(self, on: bool) -> None:
        """No attention or gates to record."""
        self.trace = [] if on else None
