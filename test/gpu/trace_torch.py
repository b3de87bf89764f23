"""trace_torch.py [STEPS] - a small training loop whose kernels go through
CUB: embedding_bag's backward (an index sort, on autograd's thread),
torch.sort, torch.unique and torch.randperm on CUDA, an AdamW step, each
part in an NVTX range (test/gpu/trace-nests.sh traces it)."""
import sys

import torch

STEPS = int(sys.argv[1]) if len(sys.argv) > 1 else 30
torch.manual_seed(0)
emb = torch.nn.EmbeddingBag(50000, 64, mode="sum").cuda()
head = torch.nn.Linear(64, 10).cuda()
opt = torch.optim.AdamW(list(emb.parameters()) + list(head.parameters()), lr=1e-3)
nvtx = torch.cuda.nvtx
for step in range(STEPS):
    nvtx.range_push("step")
    idx = torch.randint(0, 50000, (8192,), device="cuda")
    offsets = torch.arange(0, 8192, 16, device="cuda")
    nvtx.range_push("forward")
    loss = head(emb(idx, offsets)).float().pow(2).mean()
    nvtx.range_pop()
    nvtx.range_push("backward")
    loss.backward()
    nvtx.range_pop()
    with nvtx.range("optimizer"):
        opt.step()
        opt.zero_grad(set_to_none=True)
    with nvtx.range("sorts"):
        torch.sort(torch.rand(200000, device="cuda"))
        torch.unique(idx)
        torch.randperm(200000, device="cuda")
    nvtx.range_pop()
torch.cuda.synchronize()
print("trace torch done")
