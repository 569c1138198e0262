#ifndef EINREL_GRAPHBUILDERS_HPP
#define EINREL_GRAPHBUILDERS_HPP

#include <einrel_Graph.hpp>

#include <string>
#include <vector>

// Builders for the workloads of eindecomp.txt §3 and §9: they add inputs and einsum vertices to a graph
// and return the vertex holding the result. Every name a builder creates starts with `prefix`.
namespace einrel::builders {

// M0 × M1 × ... × Mn-1 evaluated left to right; Mk is an input of bound [dims[k], dims[k+1]] named
// prefix+"M<k>", the products are named prefix+"P<k>". Needs at least three dims (one product).
VertexId matrix_chain(Graph& g, const std::vector<Extent>& dims, Dtype dtype, const std::string& prefix = "");

// The matrix-chain program of `einrel matrix-chain` (docs/cli.md): (A×B) + (C×(D×E)). Square: all
// matrices S×S. Skewed: A S×S/10, B S/10×S, C S×S/10, D S/10×10S, E 10S×S (S >= 10).
VertexId matrix_chain_program(Graph& g, Extent scale, bool skewed, Dtype dtype, const std::string& prefix = "");

// Labels of eindecomp.txt §3: s sequence, a attribute (model width), h heads, d per-head width.
struct AttentionShape {
  Extent sequence = 0, attribute = 0, heads = 0, head_dim = 0;
};

// Multi-head attention exactly as eindecomp.txt §3: projections QH, KH, VH [s,h,d] through weight inputs
// prefix+"WQ", "WK", "WV" [a,h,d]; scores T1 [h,s,s'] (s' is spelled t); T2 = T1 / sqrt(d); T3 =
// softmax(T2) over s'; O [s,h,d]; Y [s,a] through prefix+"WO" [a,h,d]. q, k, v are [s,a] vertices.
VertexId multi_head_attention(Graph& g, VertexId q, VertexId k, VertexId v, const AttentionShape& shape,
                              const std::string& prefix = "");

// A feed-forward layer on x [s,a]: H = relu(x W1 + b1) with W1 [a,hidden], then Y = H W2 + b2 with
// W2 [hidden,a]; weights and biases are inputs prefix+"W1", "b1", "W2", "b2".
VertexId feed_forward(Graph& g, VertexId x, Extent hidden, const std::string& prefix = "");

// One transformer layer on x [s,a]: self-attention with a residual sum, then a feed-forward layer with a
// residual sum.
VertexId transformer_layer(Graph& g, VertexId x, const AttentionShape& shape, Extent hidden,
                           const std::string& prefix = "");

// A LLaMA decoder layer (eindecomp.txt §9, experiment 3; prefill of one sequence) on x [s,a]:
//   x1 = x + Attention(RMSNorm(x)),  out = x1 + SwiGLU(RMSNorm(x1)).
// RMSNorm(x) = x · (mean_a x² + eps)^(-1/2) · g, with g the inputs prefix+"attn_norm" / "ffn_norm" [a].
// Attention: Q, K, V [s,h,d] through prefix+"WQ", "WK", "WV" [a,h,d]; RoPE on Q and K as
// q·cos + (q·rot)·sin with the inputs prefix+"cos", "sin" [s,d] and prefix+"rot" [d,d] (rotate-half as a
// fixed signed permutation matrix); scores [h,s,t] scaled by 1/sqrt(d) plus the input prefix+"mask" [s,t]
// (0 where t <= s, a large negative number elsewhere); softmax over t; O [s,h,d]; output through
// prefix+"WO" [a,h,d]. SwiGLU: (silu(x W_gate) ⊙ (x W_up)) W_down with prefix+"W_gate", "W_up" [a,f] and
// prefix+"W_down" [f,a]; silu(g) = g · sigmoid(g). Labels: s sequence, t key sequence, a model width,
// h heads, d head width, f FFN hidden width.
struct LlamaShape {
  Extent sequence = 0, model = 0, heads = 0, head_dim = 0, hidden = 0;
  double eps = 1e-5;
};
VertexId llama_layer(Graph& g, VertexId x, const LlamaShape& shape, const std::string& prefix = "");

}  // namespace einrel::builders

#endif
