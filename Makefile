# graphfuse: `make demo` and `make test` work on a machine that has only Python 3.11+.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp
LIT_OPTS ?= -sv
# pytest workers of make test (pytest-xdist): one per core by default
PYTEST_WORKERS ?= auto

.PHONY: setup demo test test-slow lit pytest lint irdl docs bench bench-models bench-zoo bench-generate bench-forward bench-training bench-compile bench-peers-setup fuzz onnx-conformance clean

$(STAMP): pyproject.toml setup.py lowering/native/kmpc_gomp.c lowering/native/buffer_pool.c dialect/native/op_walk.c
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test,torch,onnx,models]'
	touch $(STAMP)

setup: $(STAMP)

demo: $(STAMP)
	$(BIN)/python -m graphfuse.tools.demo

test: $(STAMP)
	@status=0; \
	$(BIN)/lit $(LIT_OPTS) test || status=1; \
	$(BIN)/python -m pytest -q -n $(PYTEST_WORKERS) -m "not slow" test/python || status=1; \
	exit $$status

# The cases marked slow (real models unfused, each imported and compiled whole).
test-slow: $(STAMP)
	$(BIN)/python -m pytest -q -m slow test/python

lit: $(STAMP)
	$(BIN)/lit $(LIT_OPTS) test

pytest: $(STAMP)
	$(BIN)/python -m pytest -q test/python

lint: $(STAMP)
	$(BIN)/ruff check .

# Regenerate the files derived from the op catalog and the pass registry.
irdl: $(STAMP)
	$(BIN)/python -m graphfuse.dialect.irdl_gen > dialect/graph.irdl.mlir

docs: $(STAMP)
	$(BIN)/python -m graphfuse.tools.gen_docs docs

# Speed: every workload as graphfuse unfused / fused beside numpy, torch eager, torch.compile and (after
# `make bench-peers-setup`) IREE, with the machine's bandwidth and matmul limits measured in the same run; prints
# the table and writes it to bench/latest.md.  ARGS=... passes options, e.g.
# make bench ARGS="--workloads softmax,gelu --calls 20", ARGS="--peers numpy,iree --shapes odd".
bench: $(STAMP)
	$(BIN)/python -m bench.run --markdown bench/latest.md $(ARGS)

# The real models alone (transformers' LlamaModel, BertModel, GPT2Model and the ResNet block), fused and at opt
# level 0 beside torch eager and torch.compile: make bench-models ARGS="--shapes odd".
bench-models: $(STAMP)
	$(BIN)/python -m bench.run --workloads llama,bert,gpt2,resnet_block --peers o0,torch,compile \
		--markdown bench/models-latest.md $(ARGS)

# The model zoo: 46 transformers architectures (decoder LMs, encoders, encoder-decoders, vision, CLIP, speech,
# Mamba) through torch.compile as users call them (padded batches, default caches), fp32 and bf16: strict pass or
# fail with the reason, error against eager, compile latency and time per call beside eager and Inductor;
# writes bench/zoo-latest.md (about an hour on 2 cores).
# make bench-zoo ARGS="--models llama,bert --dtypes fp32 --rounds 10"
bench-zoo: $(STAMP)
	$(BIN)/python -m bench.zoo --markdown bench/zoo-latest.md $(ARGS)

# Text generation: HF LlamaForCausalLM.generate (greedy, the default cache; --cache static), ms per token in eager PyTorch, under
# torch.compile's Inductor and under torch.compile(backend="graphfuse"); writes bench/generate-latest.md.
# make bench-generate ARGS="--hidden 256 --layers 2 --variants eager,graphfuse"
bench-generate: $(STAMP)
	$(BIN)/python -m bench.generate --markdown bench/generate-latest.md $(ARGS)

# Forward latency of a BERT encoder and a Llama decoder over 8 (batch, length) sizes: graphfuse's one compile
# for every size beside a static compile per size; writes bench/forward-latest.md.
# make bench-forward ARGS="--hidden 256 --layers 2"
bench-forward: $(STAMP)
	$(BIN)/python -m bench.forward --model bert --markdown bench/forward-bert-latest.md $(ARGS)
	$(BIN)/python -m bench.forward --model llama --markdown bench/forward-llama-latest.md $(ARGS)

# A training step (forward, backward, Adam) of a transformer encoder layer: eager PyTorch, torch.compile's
# Inductor, graphfuse fused and unfused, losses checked against eager; writes bench/training-latest.md.
# make bench-training ARGS="--batch 8 --seq 64 --variants eager,graphfuse"
bench-training: $(STAMP)
	$(BIN)/python -m bench.training --markdown bench/training-latest.md $(ARGS)

# Compile time and memory at scale: elementwise chains, random graphs and long concats of 1k to 50k ops through
# graphfuse.compile, each case cold in a subprocess (seconds, CPU seconds and peak RSS per op, stage times) and
# again warm from the compile cache in another, and graphfuse-run's peak RSS on a 200M-element exp + add; prints
# the table and writes it to bench/compile-latest.md (more than an hour on 2 cores).
# make bench-compile ARGS="--sizes 1000,5000 --memory-elements 0"
bench-compile: $(STAMP)
	$(BIN)/python -m bench.compile_scale --markdown bench/compile-latest.md $(ARGS)

# The IREE peer of `make bench` lives in its own venv (IREE is no dependency of graphfuse); torch is pinned
# first so that pip never swaps in another torch build.
PEERS_VENV := .venv-peers
bench-peers-setup:
	$(PYTHON) -m venv $(PEERS_VENV)
	$(PEERS_VENV)/bin/python -m pip install --quiet torch==2.13.0
	$(PEERS_VENV)/bin/python -m pip install --quiet torch==2.13.0 numpy==2.4.6 \
		iree-base-compiler==3.13.0 iree-base-runtime==3.13.0

# Differential fuzzing: N random graphs x random switch sets through every pipeline, compared with the reference
# interpreter (the pytest run covers a bounded number); prints the counts.  make fuzz N=10000
N ?= 1000
fuzz: $(STAMP)
	$(BIN)/python -m graphfuse.tools.fuzz --count $(N)

# Every ONNX backend node case of every claimed op also through the compiled CPU path (CI compiles one per op).
onnx-conformance: $(STAMP)
	GRAPHFUSE_ONNX_COMPILE_ALL=1 $(BIN)/python -m pytest -q test/python/test_frontend_onnx.py -k compiled

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .ruff_cache
	find . -name Output -type d -prune -exec rm -rf {} +
