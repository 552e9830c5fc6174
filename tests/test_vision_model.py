"""ViT (positional / vanilla attention) and CNN baselines: shapes, parameter counts, attention
against a loop implementation, image-independence of positional scores, permutation symmetry."""

import math

import pytest

torch = pytest.importorskip("torch")
import torch.nn.functional as F  # noqa: E402
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from theorydyn.vision.grid import permute_tiles  # noqa: E402
from theorydyn.vision.model import VGG19_PLAN, ResNet18, ViT, ViTConfig, build_model, patchify  # noqa: E402

torch.set_num_threads(1)  # tiny models: extra threads only cost on a shared 2-core machine

TINY = dict(image_size=8, patch=2, channels=3, classes=7, width=12, depth=2, heads=3, mlp=20)


def nparams(m):
    return sum(p.numel() for p in m.parameters())


def vit_hand_count(c, p, E, L, M, K, D):
    embed = c * p * p * E + E
    block = 2 * E + (E * 2 * E + 2 * E) + (E * E + E) + (E * E + E) + 2 * E + (E * M + M) + (M * E + E)
    return embed + D * E + L * block + 2 * E + E * K + K


@pytest.mark.parametrize("attention", ["positional", "vanilla"])
def test_vit_shapes_and_parameter_count(attention):
    cfg = ViTConfig(**TINY, attention=attention)
    m = ViT(cfg)
    assert m(torch.randn(5, 3, 8, 8)).shape == (5, 7)
    assert nparams(m) == vit_hand_count(3, 2, 12, 2, 20, 7, 16)
    paper = ViT(ViTConfig(attention=attention))  # 7 layers, 12 heads, width/MLP 384, patch 4, 32×32
    assert nparams(paper) == vit_hand_count(3, 4, 384, 7, 384, 10, 64) == 6_268_042


def resnet18_hand_count(c, K):
    n = 9 * c * 64 + 2 * 64
    cin = 64
    for _i, cout in enumerate((64, 128, 256, 512)):
        for _j in range(2):
            n += 9 * cin * cout + 2 * cout + 9 * cout * cout + 2 * cout
            if cin != cout:
                n += cin * cout + 2 * cout
            cin = cout
    return n + 512 * K + K


def vgg19_hand_count(c, K):
    n, cin = 0, c
    for v in VGG19_PLAN:
        if v != "M":
            n += 9 * cin * v + v + 2 * v
            cin = v
    return n + 512 * K + K


@pytest.mark.parametrize("classes", [10, 100])
def test_cnn_baselines_parameter_counts_and_shapes(classes):
    r, v = ResNet18(3, classes), build_model("vgg19", channels=3, classes=classes)
    assert nparams(r) == resnet18_hand_count(3, classes)
    assert nparams(v) == vgg19_hand_count(3, classes)
    if classes == 10:  # the widely quoted sizes of the CIFAR-10 forms
        assert (nparams(r), nparams(v)) == (11_173_962, 20_040_522)
    for m in (r, v, build_model("cnn", channels=3, classes=classes)):
        m.eval()
        with torch.no_grad():
            assert m(torch.randn(1, 3, 8 if classes == 100 else 32, 8 if classes == 100 else 32)).shape == (1, classes)


def test_patchify_is_row_major_patch_flattening():
    x = torch.arange(2 * 3 * 4 * 4, dtype=torch.float32).reshape(2, 3, 4, 4)
    t = patchify(x, 2)
    assert t.shape == (2, 4, 12)
    for b in range(2):
        for q in range(4):
            r, c = divmod(q, 2)
            assert torch.equal(t[b, q], x[b, :, 2 * r : 2 * r + 2, 2 * c : 2 * c + 2].reshape(-1))


def positional_model(seed=0):
    torch.manual_seed(seed)
    m = ViT(ViTConfig(**TINY, attention="positional"))
    with torch.no_grad():
        m.pos.normal_()  # spread the scores so that layers and heads differ clearly
        for blk in m.blocks:
            blk.attn.qk.weight.normal_(0, 0.5)
    return m.eval()


def test_positional_scores_do_not_depend_on_the_image_but_differ_per_layer_and_head():
    m = positional_model()
    a, b = torch.randn(1, 3, 8, 8), 5 * torch.randn(3, 3, 8, 8)
    m(a)
    Sa = [blk.attn.last_scores.clone() for blk in m.blocks]
    m(b)
    Sb = [blk.attn.last_scores.clone() for blk in m.blocks]
    for x, y, z in zip(Sa, Sb, m.positional_scores(), strict=True):
        assert x.shape == (3, 16, 16)
        assert torch.equal(x, y)
        assert torch.allclose(x, z.detach())
        assert torch.allclose(x.sum(-1), torch.ones(3, 16))
        for h in range(1, 3):
            assert (x[h] - x[0]).abs().max() > 1e-3  # heads differ
    assert (Sa[0] - Sa[1]).abs().max() > 1e-3  # layers differ


def test_positional_attention_matches_a_per_image_loop():
    m = positional_model(1)
    attn, pos = m.blocks[0].attn, m.pos
    x = torch.randn(4, 16, 12)
    y = attn(x, pos)
    E, H, dh = 12, 3, 4
    Wqk, bqk = attn.qk.weight, attn.qk.bias
    q, k = (pos @ Wqk[:E].T + bqk[:E]), (pos @ Wqk[E:].T + bqk[E:])
    ref = torch.empty_like(y)
    for b in range(4):
        v = x[b] @ attn.v.weight.T + attn.v.bias
        heads = []
        for h in range(H):
            sl = slice(h * dh, (h + 1) * dh)
            S = torch.softmax(q[:, sl] @ k[:, sl].T / math.sqrt(dh), dim=-1)
            heads.append(S @ v[:, sl])
        ref[b] = torch.cat(heads, 1) @ attn.out.weight.T + attn.out.bias
    assert torch.allclose(y, ref, atol=1e-5)


def test_vanilla_attention_matches_explicit_softmax():
    torch.manual_seed(2)
    m = ViT(ViTConfig(**TINY, attention="vanilla")).eval()
    attn = m.blocks[0].attn
    x = torch.randn(3, 16, 12)
    y = attn(x, m.pos)
    q, k = attn.qk(x).split(12, -1)
    v = attn.v(x)
    heads = []
    for h in range(3):
        sl = slice(4 * h, 4 * h + 4)
        S = torch.softmax(q[..., sl] @ k[..., sl].transpose(1, 2) / 2.0, dim=-1)
        heads.append(S @ v[..., sl])
    assert torch.allclose(y, attn.out(torch.cat(heads, -1)), atol=1e-5)


@settings(max_examples=10, deadline=None)
@given(st.permutations(range(16)))
def test_vit_without_positional_encodings_ignores_the_patch_order(perm):
    """No P, mean pooling: permuting whole patches (π with tile side = patch) leaves the logits."""
    torch.manual_seed(0)
    m = ViT(ViTConfig(**TINY, attention="vanilla", pos_embed=False)).eval()
    x = torch.randn(2, 3, 8, 8)
    xp = permute_tiles(x, perm, 2)
    assert not torch.equal(x, xp) or list(perm) == list(range(16))
    assert torch.allclose(m(x), m(xp), atol=1e-5)


@settings(max_examples=10, deadline=None)
@given(st.permutations(range(16)), st.sampled_from(["positional", "vanilla"]))
def test_vit_is_equivariant_when_patches_and_positions_move_together(perm, attention):
    torch.manual_seed(0)
    m = ViT(ViTConfig(**TINY, attention=attention)).eval()
    with torch.no_grad():
        m.pos.normal_()
    x = torch.randn(2, 3, 8, 8)
    before = m(x)
    with torch.no_grad():
        m.pos.copy_(m.pos[list(perm)])  # position q now carries the encoding of perm[q]
    assert torch.allclose(m(permute_tiles(x, perm, 2)), before, atol=1e-5)


def test_invalid_configurations_are_rejected():
    with pytest.raises(ValueError, match="attention"):
        ViTConfig(attention="sparse")
    with pytest.raises(ValueError, match="patch size 3"):
        ViTConfig(patch=3)
    with pytest.raises(ValueError, match="heads"):
        ViTConfig(width=10, heads=3)
    with pytest.raises(ValueError, match="model"):
        build_model("alexnet", channels=3, classes=10)


def test_init_and_pos_std_are_validated():
    for bad in (0.0, -1.0, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="pos_std"):
            ViTConfig(pos_std=bad)
    with pytest.raises(ValueError, match="init"):
        ViTConfig(init="xavier")
    for k in ("patch", "width", "depth", "heads", "mlp", "image_size"):
        with pytest.raises(ValueError, match=f"{k} must be a positive integer"):
            ViTConfig(**{k: 0})


@pytest.mark.parametrize("std", [0.02, 1.0])
def test_positional_encodings_start_as_a_normal_truncated_at_two_sigma(std):
    from scipy.stats import truncnorm

    torch.manual_seed(0)
    p = ViT(ViTConfig(image_size=32, patch=2, channels=1, width=64, heads=4, depth=1, pos_std=std)).pos.detach()
    assert p.abs().max() <= 2 * std * (1 + 1e-6)
    # 256·64 draws: the sample std is within ~1% of the truncated normal's (std · 0.8796)
    assert abs(float(p.std()) / (std * truncnorm.std(-2, 2)) - 1) < 0.03


def test_linear_initialisations_have_their_stated_scales():
    """ "vit": weights N(0, 0.02²), zero biases; "torch": weights and biases U(±1/√fan_in), std 1/√(3·fan_in)."""
    cfg = dict(image_size=8, patch=2, channels=1, width=64, heads=4, depth=2, mlp=256)
    for init in ("vit", "torch"):
        torch.manual_seed(1)
        net = ViT(ViTConfig(init=init, **cfg))
        for name, m in net.named_modules():
            if not isinstance(m, torch.nn.Linear):
                continue
            w, fan_in = m.weight.detach(), m.weight.shape[1]
            if init == "vit":
                assert abs(float(w.std()) / 0.02 - 1) < 0.15, name
                assert not m.bias.detach().any(), name
            else:
                bound = 1 / math.sqrt(fan_in)
                assert float(w.abs().max()) <= bound and float(m.bias.detach().abs().max()) <= bound, name
                assert abs(float(w.std()) * math.sqrt(3 * fan_in) - 1) < 0.15, name


def test_positional_forward_gradients_reach_p_through_scores_only():
    """In positional mode P enters through the scores alone: zero V-path gradient does not zero dP."""
    m = positional_model(3).train()
    loss = F.cross_entropy(m(torch.randn(4, 3, 8, 8)), torch.tensor([0, 1, 2, 3]))
    loss.backward()
    assert m.pos.grad is not None and m.pos.grad.abs().sum() > 0
    assert m.blocks[0].attn.qk.weight.grad.abs().sum() > 0
