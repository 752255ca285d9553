"""The CTL models of Csordás et al. 2021's Table 1 (docs/csordas2021.md): one layer applied n_layers times.

* ``Transformer``: the registry's softmax attention (``RegistryMixer``, initialised as the release's
  ``nn.MultiheadAttention``), absolute sinusoidal positions (+ dropout 0.1), post-LN layer;
* ``+ rel``: Transformer-XL-style relative attention (:mod:`~trainables.csordas2021.relative`), post-LN layer;
* ``+ rel + gate`` / ``+ abs/rel + gate``: the copy-gated layer with a tanh update (``NDRResidual``),
  relative attention, the latter with the per-head abs/rel switch;
* ``+ geom. att.``: row-normalised geometric attention in a post-LN layer;
* ``NDR``: geometric attention (unnormalised) + the copy gate with a LayerNorm update + gate dropout;
* ``LSTM``: the recurrent baseline (embedding 16, one layer of 200).

Every Transformer variant reads out the EOS column (``length - 1``) through Linear(d, 8). Every attention is
called through the mixer interface of ``trainables.mixers.base``, ``attention(x, mask)`` with the key-padding
mask (True = real token), so no real token attends to padding. Layers record their attention weights / gate
activations when ``record`` is set (the probe figures).

**One definition, one model or K stacked.** Every model is written over leading dimensions like the mixers
(``trainables.stacked``: ``dense``, ``norm``, ``embed``): one model on tokens (B, N), or K members stacked by
:func:`stack_members` on tokens (K, B, N), each parameter (K, ...). Their dropout draws come from ``noise``
(:class:`~trainables.csordas2021.noise.MemberNoise`: each member its own generator, in its own batch's shape; None:
torch's default generator, as ``F.dropout``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch
import torch.nn.functional as F
from torch import nn

from trainables.csordas2021.ctl import MAX_INPUT_LEN, N_SYMBOLS, VOCAB_SIZE
from trainables.csordas2021.geometric import GeometricAttention
from trainables.csordas2021.noise import WHOLE, MemberNoise, dropout, gate_keep
from trainables.csordas2021.relative import RelativeAttention, sinusoid
from trainables.mixers.base import Mixer, MultiHeadMixer
from trainables.stacked import dense, embed, norm, stack_modules


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
        self.mixer: Mixer = (mha_initialised_softmax(d_model, n_heads, dropout) if torch_mha_init else
                             build_registry_mixer(name, d_model, n_heads, dropout))
        self.token_major = torch_mha_init
        self.record = False
        self.last_weights: torch.Tensor | None = None

    def forward(self, x: torch.Tensor, mask: torch.Tensor, noise: MemberNoise | None = None) -> torch.Tensor:
        """x (..., B, N, d), mask (..., B, N) True at real tokens -> (..., B, N, d). ``noise`` is not used: a registry
        mixer's own attention dropout (``att_dropout``, 0 in every CTL row) draws from torch's default generator."""
        n = x.shape[-2]
        if self.seq_len is not None:
            x = F.pad(x, (0, 0, 0, self.seq_len - n))  # (..., B, seq_len, d)
            mask = F.pad(mask, (0, self.seq_len - n), value=False)  # (..., B, seq_len)
        weights_of = getattr(self.mixer, "attention_weights", None)  # MultiHeadMixer's, or a plugin mixer's own
        if self.record and callable(weights_of):
            weights: torch.Tensor = weights_of(x, mask)
            self.last_weights = weights.detach()[..., :n, :n]
        out: torch.Tensor = self.mixer(x, mask)[..., :n, :]  # (..., B, N, d)
        if self.token_major:
            # nn.MultiheadAttention returns (N, B, d) in memory, and the layer's dropout draws its mask in memory
            # order: the same layout keeps the release Transformer's dropout masks, so its results, bit for bit.
            out = out.transpose(-3, -2).contiguous().transpose(-3, -2)
        return out


def build_registry_mixer(name: str, d_model: int, n_heads: int, dropout: float) -> Mixer:
    """The registry mixer ``name`` as the CTL layer uses it (no MTE switches; bilinear at the longest input)."""
    from trainables.mixers import build_mixer

    mixer: Mixer = build_mixer(name, d_model, n_heads, hidden_norm=False, attention_gelu=False, dropout=dropout,
                               options={"seq_len": MAX_INPUT_LEN})
    return mixer


def mha_initialised_softmax(d_model: int, n_heads: int, dropout: float) -> MultiHeadMixer:
    """The registry's ``softmax`` mixer with the weights torch's ``nn.MultiheadAttention`` starts with.

    The release's plain Transformer uses that module; building the mixer on the meta device draws nothing, and
    the module built next draws what it always drew (its in-projection is Xavier, biases 0), so the model's
    later layers are initialised as before. Its (3d, d) in-projection has the registry's q; k; v row layout.
    """
    with torch.device("meta"):
        mixer = build_registry_mixer("softmax", d_model, n_heads, dropout)
    assert isinstance(mixer, MultiHeadMixer)  # the registry's softmax attention
    mixer.to_empty(device="cpu")
    reference = nn.MultiheadAttention(d_model, n_heads, dropout=dropout, batch_first=True)
    with torch.no_grad():
        mixer.qkv.weight.copy_(reference.in_proj_weight)
        mixer.qkv.bias.copy_(reference.in_proj_bias)
        mixer.mix.weight.copy_(reference.out_proj.weight)
        mixer.mix.bias.copy_(reference.out_proj.bias)
    return mixer


#: The attention a CTL layer runs (each takes ``(x, mask, noise=...)``).
Attention = RegistryMixer | RelativeAttention | GeometricAttention


class PostLNLayer(nn.Module):
    """attention -> +residual -> LN -> ReLU FFN -> +residual -> LN (dropout on sublayer outputs and FFN hidden)."""

    def __init__(self, attention: Attention, d_model: int, d_ff: int, dropout: float) -> None:
        super().__init__()
        self.attention = attention
        self.ff1, self.ff2 = nn.Linear(d_model, d_ff), nn.Linear(d_ff, d_model)
        self.ln1, self.ln2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)
        self.dropout = dropout
        self.record = False
        self.last_gates: torch.Tensor | None = None

    def forward(self, x: torch.Tensor, mask: torch.Tensor, noise: MemberNoise | None = None) -> torch.Tensor:
        """x (..., B, N, d), mask (..., B, N) True at real tokens -> (..., B, N, d)."""
        drop = self.dropout if self.training else 0.0
        a: torch.Tensor = self.attention(x, mask, noise=noise)
        x = norm(x + dropout(a, drop, True, noise), self.ln1)
        hidden = dropout(F.relu(dense(x, self.ff1)), drop, True, noise)
        return norm(x + dropout(dense(hidden, self.ff2), drop, True, noise), self.ln2)


class GatedLayer(nn.Module):
    """The copy-gated layer (docs/csordas2021.md): h' = g * u + (1 - g) * h, no residual around the update FFN.

    z = LN1(h + Drop(attention(h))); u = LN2(FFN_data(z)) (``update="ln"``, NDR) or tanh(FFN_data(z))
    (``update="tanh"``, the "+ gate" rows); g = sigmoid(FFN_gate(z)) with its output bias at ``gate_bias`` (the
    paper's -3; config ``gate_bias``, the App. C.2 ablation); gate dropout
    sets the whole gate vector of a (sample, position) to 0 with probability ``gate_dropout`` while training.
    """

    def __init__(self, attention: Attention, d_model: int, d_ff: int, dropout: float, *, update: str,
                 gate_dropout: float = 0.0, gate_bias: float = -3.0) -> None:
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
        nn.init.constant_(self.gate2.bias, gate_bias)  # paper: sigmoid(-3) ~ 0.047, layers start close to copying
        self.record = False
        self.last_gates: torch.Tensor | None = None

    def forward(self, h: torch.Tensor, mask: torch.Tensor, noise: MemberNoise | None = None) -> torch.Tensor:
        """h (..., B, N, d), mask (..., B, N) True at real tokens -> (..., B, N, d)."""
        drop = self.dropout if self.training else 0.0
        a: torch.Tensor = self.attention(h, mask, noise=noise)
        z = norm(h + dropout(a, drop, True, noise), self.ln1)
        u = dense(dropout(F.relu(dense(z, self.ff1)), drop, True, noise), self.ff2)
        u = norm(u, self.ln2) if self.ln2 is not None else torch.tanh(u)
        g = torch.sigmoid(dense(dropout(F.relu(dense(z, self.gate1)), drop, True, noise), self.gate2))  # (..., B, N, d)
        if self.training and self.gate_dropout > 0:
            g = g * gate_keep(g.shape[:-1] + (1,), self.gate_dropout, g.device, noise)  # (..., B, N, 1)
        if self.record:
            self.last_gates = g.detach()
        return g * u + (1 - g) * h


def at_last_token(x: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    """x (..., B, N, d) at each sequence's last column (``length - 1``, EOS): (..., B, d)."""
    index = (lengths - 1)[..., None, None].expand(*lengths.shape, 1, x.shape[-1])  # (..., B, 1, d)
    return x.gather(-2, index).squeeze(-2)


class SharedLayerClassifier(nn.Module):
    """Embedding [+ sinusoidal PE + dropout 0.1] -> one layer applied n_layers times -> Linear at EOS."""

    def __init__(self, layer: PostLNLayer | GatedLayer, d_model: int, n_layers: int, *, absolute_positions: bool,
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
        self.trace: list[dict[str, torch.Tensor | None]] | None = None

    def forward(self, tokens: torch.Tensor, lengths: torch.Tensor, noise: MemberNoise | None = None) -> torch.Tensor:
        """tokens (..., B, N), lengths (..., B) -> logits (..., B, 8) read out at the EOS column."""
        n = tokens.shape[-1]
        mask = torch.arange(n, device=tokens.device) < lengths.unsqueeze(-1)  # (..., B, N), True = real token
        x = embed(tokens, self.embedding)  # (..., B, N, d)
        if self.absolute_positions:
            pe = sinusoid(torch.arange(n), self.d_model).to(x.device, x.dtype)
            x = dropout(x + pe, 0.1, self.training, noise)
        for _ in range(self.n_layers):
            x = self.layer(x, mask, noise)
            if self.trace is not None:
                self.trace.append({"attention": self.layer.attention.last_weights, "gates": self.layer.last_gates})
        return dense(at_last_token(x, lengths), self.readout)

    def set_record(self, on: bool) -> None:
        """Keep each step's attention weights and gates in ``self.trace`` (a list, one dict per step)."""
        self.trace = [] if on else None
        self.layer.record = on
        self.layer.attention.record = on


class LSTMWeights(nn.Module):
    """An ``nn.LSTM`` layer's four parameters, stacked over K members (:func:`stack_members` puts it in place of the
    ``nn.LSTM``, whose cuDNN weight flattening would not take stacked weights)."""

    def __init__(self, lstm: nn.LSTM) -> None:
        super().__init__()
        self.weight_ih_l0 = lstm.get_parameter("weight_ih_l0")  # (K, 4H, E)
        self.weight_hh_l0 = lstm.get_parameter("weight_hh_l0")  # (K, 4H, H)
        self.bias_ih_l0 = lstm.get_parameter("bias_ih_l0")  # (K, 4H)
        self.bias_hh_l0 = lstm.get_parameter("bias_hh_l0")  # (K, 4H)


def recur(x: torch.Tensor, lstm: nn.LSTM | LSTMWeights) -> torch.Tensor:
    """The LSTM's hidden states (..., B, N, H) for x (..., B, N, E), from zero states.

    One model: ``nn.LSTM``'s own call. K members: the same equations (torch's gate order i, f, g, o) step by step,
    each member's matmuls batched: c' = s(f) c + s(i) tanh(g), h' = s(o) tanh(c')."""
    if isinstance(lstm, nn.LSTM):
        out: torch.Tensor = lstm(x)[0]
        return out
    k, b, n, e = x.shape
    w_hh = lstm.weight_hh_l0.transpose(1, 2)  # (K, H, 4H)
    gates_in = torch.baddbmm(lstm.bias_ih_l0.unsqueeze(1), x.reshape(k, b * n, e), lstm.weight_ih_l0.transpose(1, 2))
    gates_in = gates_in.view(k, b, n, -1)  # (K, B, N, 4H)
    h = x.new_zeros(k, b, w_hh.shape[1])
    c = torch.zeros_like(h)
    states = []
    for t in range(n):
        i, f, g, o = (gates_in[:, :, t] + torch.baddbmm(lstm.bias_hh_l0.unsqueeze(1), h, w_hh)).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        h = torch.sigmoid(o) * torch.tanh(c)
        states.append(h)
    return torch.stack(states, dim=-2)  # (K, B, N, H)


class LSTMClassifier(nn.Module):
    """Embedding 16 -> Drop -> one LSTM layer -> Drop -> Linear(hidden, 8) at the EOS column."""

    def __init__(self, hidden: int, dropout: float, embedding: int = 16) -> None:
        super().__init__()
        self.embedding = nn.Embedding(VOCAB_SIZE, embedding)
        self.lstm: nn.LSTM | LSTMWeights = nn.LSTM(embedding, hidden, batch_first=True)
        self.dropout = dropout
        self.readout = nn.Linear(hidden, N_SYMBOLS)
        self.trace: list[dict[str, torch.Tensor | None]] | None = None

    def forward(self, tokens: torch.Tensor, lengths: torch.Tensor, noise: MemberNoise | None = None) -> torch.Tensor:
        """tokens (..., B, N), lengths (..., B) -> logits (..., B, 8); unidirectional, so padding after EOS is never
        read."""
        x = dropout(embed(tokens, self.embedding), self.dropout, self.training, noise)
        y = dropout(at_last_token(recur(x, self.lstm), lengths), self.dropout, self.training, noise, WHOLE)
        return dense(y, self.readout)

    def set_record(self, on: bool) -> None:
        """No attention or gates to record."""
        self.trace = [] if on else None


#: A CTL model (:func:`trainables.csordas2021.members.build_model`).
CTLModel = SharedLayerClassifier | LSTMClassifier


def stack_members(models: Sequence[CTLModel]) -> CTLModel:
    """K models of one configuration as one module of stacked parameters (:func:`trainables.stacked.stack_modules`);
    the LSTM's layer becomes :class:`LSTMWeights`."""
    stacked = stack_modules(models)
    if isinstance(stacked, LSTMClassifier) and isinstance(stacked.lstm, nn.LSTM):
        stacked.lstm = LSTMWeights(stacked.lstm)
    return stacked
