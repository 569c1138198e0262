#include <einrel_GraphFile.hpp>

#include <cctype>
#include <cmath>
#include <fstream>
#include <sstream>

#include <sys/stat.h>

namespace einrel {
namespace {

struct Token {
  enum Kind { identifier, number, string, punct, end } kind = end;
  std::string text;
  int column = 0;  // 1-based
};

std::string describe(const Token& t) {
  switch (t.kind) {
    case Token::end:
      return "end of line";
    case Token::string:
      return "string " + quoted(t.text);
    default:
      return quoted(t.text);
  }
}

// Splits one line (comment already removed) into tokens.
std::vector<Token> tokenize(const std::string& line, const SourceLocation& at) {
  std::vector<Token> tokens;
  std::size_t i = 0;
  auto is_ident_char = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  while (i < line.size()) {
    const char c = line[i];
    const int column = static_cast<int>(i) + 1;
    if (c == ' ' || c == '\t' || c == '\r') {
      ++i;
    } else if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      std::size_t j = i;
      while (j < line.size() && is_ident_char(line[j])) ++j;
      tokens.push_back({Token::identifier, line.substr(i, j - i), column});
      i = j;
    } else if (std::isdigit(static_cast<unsigned char>(c)) || c == '-' || c == '+' || c == '.') {
      // A number: extents and map constants ("12", "-2.5e-1"); its reader checks the exact form.
      std::size_t j = i + 1;
      auto continues = [&](std::size_t k) {
        const char d = line[k];
        return is_ident_char(d) || d == '.' || ((d == '-' || d == '+') && (line[k - 1] == 'e' || line[k - 1] == 'E'));
      };
      while (j < line.size() && continues(j)) ++j;
      tokens.push_back({Token::number, line.substr(i, j - i), column});
      i = j;
    } else if (c == '"') {
      const std::size_t close = line.find('"', i + 1);
      if (close == std::string::npos)
        throw ParseError({at.file, at.line, column}, "expected a closing '\"' for this string, found end of line");
      tokens.push_back({Token::string, line.substr(i + 1, close - i - 1), column});
      i = close + 1;
    } else {
      // Punctuation and stray characters alike: the parser says what it expected instead.
      tokens.push_back({Token::punct, std::string(1, c), column});
      ++i;
    }
  }
  tokens.push_back({Token::end, "", static_cast<int>(line.size()) + 1});
  return tokens;
}

class LineParser {
 public:
  LineParser(std::vector<Token> tokens, SourceLocation line, Graph& graph)
      : tokens_(std::move(tokens)), line_(std::move(line)), graph_(graph) {}

  void statement() {
    const Token& first = peek();
    if (first.kind == Token::identifier && first.text == "input" && tokens_[1].kind == Token::identifier) {
      next();
      input();
    } else if (first.kind == Token::identifier && first.text == "output" && tokens_[1].kind == Token::identifier) {
      next();
      output();
    } else if (first.kind == Token::identifier) {
      assignment();
    } else {
      fail(first, "expected 'input', 'output' or 'NAME = einsum(...)'");
    }
    expect_end();
  }

 private:
  const Token& peek() const { return tokens_[pos_]; }
  const Token& next() { return tokens_[pos_ < tokens_.size() - 1 ? pos_++ : pos_]; }
  SourceLocation at(const Token& t) const { return {line_.file, line_.line, t.column}; }

  [[noreturn]] void fail(const Token& t, const std::string& expected) const {
    throw ParseError(at(t), expected + ", found " + describe(t));
  }
  const Token& expect(Token::Kind kind, const std::string& expected) {
    if (peek().kind != kind) fail(peek(), "expected " + expected);
    return next();
  }
  void expect_punct(char c, const std::string& context) {
    if (peek().kind != Token::punct || peek().text[0] != c)
      fail(peek(), std::string("expected '") + c + "' " + context);
    next();
  }
  bool accept_punct(char c) {
    if (peek().kind == Token::punct && peek().text[0] == c) {
      next();
      return true;
    }
    return false;
  }
  void expect_end() {
    if (peek().kind != Token::end) fail(peek(), "expected end of statement");
  }

  // Runs a graph-building call and reports its error at `where`.
  template <class F>
  auto located(const Token& where, F&& f) -> decltype(f()) {
    try {
      return f();
    } catch (const ParseError&) {
      throw;
    } catch (const Error& e) {
      throw ParseError(at(where), e.what());
    }
  }

  VertexId operand(const Token& name) const {
    if (auto v = graph_.find(name.text)) return *v;
    throw ParseError(at(name), "unknown tensor '" + name.text + "' (not defined on an earlier line)");
  }

  // input NAME DTYPE[e0,e1,...] [sparse]
  void input() {
    const Token& name = expect(Token::identifier, "a tensor name after 'input'");
    const Token& type = expect(Token::identifier, "a dtype (f32 or f64) after the input name");
    const auto dtype = parse_dtype(type.text);
    if (!dtype) throw ParseError(at(type), "unknown dtype '" + type.text + "' (expected f32 or f64)");
    expect_punct('[', "to open the shape after the dtype");
    Bound bound;
    if (!accept_punct(']')) {
      do {
        const Token& e = expect(Token::number, "an extent (a positive integer)");
        bound.push_back(extent(e));
      } while (accept_punct(','));
      expect_punct(']', "to close the shape");
    }
    if (peek().kind == Token::identifier && peek().text == "sparse") {  // a block-sparse input (docs/sparse.md)
      next();
      located(name, [&] { return graph_.sparse_input(name.text, *dtype, bound, at(name)); });
      return;
    }
    located(name, [&] { return graph_.input(name.text, *dtype, bound, at(name)); });
  }

  Extent extent(const Token& t) const {
    std::size_t used = 0;
    long long value = 0;
    try {
      value = std::stoll(t.text, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != t.text.size() || value <= 0)
      throw ParseError(at(t), "expected an extent (a positive integer), found '" + t.text + "'");
    return value;
  }

  // output NAME {, NAME}
  void output() {
    do {
      const Token& name = expect(Token::identifier, "a tensor name");
      const VertexId v = operand(name);
      located(name, [&] {
        graph_.output(v);
        return 0;
      });
    } while (accept_punct(','));
  }

  // NAME = einsum("equation", X, ... [, join=OP] [, agg=OP] [, map=F]) | NAME = softmax(X)
  void assignment() {
    const Token& name = next();
    expect_punct('=', "after the tensor name");
    const Token& fn = expect(Token::identifier, "a function (einsum or softmax)");
    if (fn.text == "softmax") return softmax(name);
    if (fn.text != "einsum")
      throw ParseError(at(fn), "unknown function '" + fn.text + "' (expected einsum or softmax)");
    expect_punct('(', "after einsum");
    const Token& eq = expect(Token::string, "the equation string, e.g. \"ij,jk->ik\"");
    std::vector<const Token*> operands;
    EinsumOptions options;
    options.name = name.text;
    options.origin = at(name);
    std::string keywords_seen;
    while (accept_punct(',')) {
      const Token& t = expect(Token::identifier, "an operand name or a keyword argument");
      if (accept_punct('=')) {
        keyword(t, options, keywords_seen);
      } else if (!keywords_seen.empty()) {
        fail(t, "expected a keyword argument (operands come before join=, agg=, map=)");
      } else {
        operands.push_back(&t);
      }
    }
    expect_punct(')', "to close einsum(...)");
    if (operands.empty()) fail(eq, "expected at least one operand after the equation");

    std::vector<VertexId> ids;
    for (const Token* t : operands) ids.push_back(operand(*t));
    try {
      graph_.einsum(eq.text, ids, options);
    } catch (const EquationError& e) {
      // +1 skips the opening quote
      throw ParseError({line_.file, line_.line, eq.column + 1 + static_cast<int>(e.position())}, e.what());
    } catch (const OperandError& e) {
      throw ParseError(at(*operands.at(e.position())), e.what());
    } catch (const Error& e) {
      throw ParseError(at(name), e.what());
    }
  }

  // softmax(X): the macro of docs/graph-format.md.
  void softmax(const Token& name) {
    expect_punct('(', "after softmax");
    const Token& x = expect(Token::identifier, "the tensor to apply softmax to");
    expect_punct(')', "to close softmax(...): it takes one tensor");
    const VertexId v = operand(x);
    try {
      graph_.softmax(v, name.text, at(name));
    } catch (const OperandError& e) {
      throw ParseError(at(x), e.what());
    } catch (const Error& e) {
      throw ParseError(at(name), e.what());
    }
  }

  // join=OP, agg=OP or map=F / map=F(CONSTANT).
  void keyword(const Token& key, EinsumOptions& options, std::string& seen) {
    if (key.text != "join" && key.text != "agg" && key.text != "map")
      throw ParseError(at(key), "unknown keyword argument '" + key.text + "' (expected join, agg or map)");
    if (seen.find(" " + key.text + " ") != std::string::npos)
      throw ParseError(at(key), "expected each keyword argument once, found a second '" + key.text + "='");
    seen += " " + key.text + " ";
    const Token& value = expect(Token::identifier, "an op name after '" + key.text + "='");
    if (key.text == "join") {
      const auto op = parse_join_op(value.text);
      if (!op) fail(value, "expected a join op (" + join_op_names() + ")");
      options.join = *op;
    } else if (key.text == "agg") {
      const auto op = parse_agg_op(value.text);
      if (!op) fail(value, "expected an agg op (" + agg_op_names() + ")");
      options.agg = *op;
    } else {
      const auto kind = parse_map_kind(value.text);
      if (!kind) fail(value, "expected a map (" + map_names() + ")");
      options.map.kind = *kind;
      if (MapOp::takes_constant(*kind)) {
        expect_punct('(', "after map=" + value.text + ": it takes a constant, e.g. " + value.text + "(0.5)");
        options.map.constant = constant(expect(Token::number, "a number"));
        expect_punct(')', "to close " + value.text + "(...)");
      } else if (peek().kind == Token::punct && peek().text == "(") {
        fail(peek(), "expected ',' or ')' (map=" + value.text + " takes no constant)");
      }
    }
  }

  double constant(const Token& t) const {
    std::size_t used = 0;
    double value = 0;
    try {
      value = std::stod(t.text, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != t.text.size() || !std::isfinite(value))
      throw ParseError(at(t), "expected a finite decimal number, found '" + t.text + "'");
    return value;
  }

  std::vector<Token> tokens_;
  std::size_t pos_ = 0;
  SourceLocation line_;
  Graph& graph_;
};

}  // namespace

Graph parse_graph(std::string_view text, const std::string& filename) {
  Graph graph;
  std::istringstream in{std::string(text)};
  std::string line;
  int number = 0;
  bool any_statement = false;
  while (std::getline(in, line)) {
    ++number;
    if (const auto hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    const SourceLocation where{filename, number, 0};
    auto tokens = tokenize(line, where);
    if (tokens.size() == 1) continue;  // blank or comment-only
    any_statement = true;
    LineParser(std::move(tokens), where, graph).statement();
  }
  if (!any_statement) throw ParseError({filename, 1, 1}, "expected at least one statement, found an empty graph");
  if (graph.outputs().empty())
    throw ParseError({filename, number + 1, 1}, "expected an 'output NAME' statement, found end of file");
  return graph;
}

Graph read_graph_file(const std::string& path) {
  // A directory opens as a stream on Linux and reads as empty: name it rather than parse nothing.
  struct stat status {};
  if (stat(path.c_str(), &status) == 0 && S_ISDIR(status.st_mode))
    throw Error("graph file '" + path + "' is a directory");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("cannot open graph file '" + path + "'");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw Error("cannot read graph file '" + path + "'");
  return parse_graph(text.str(), path);
}

}  // namespace einrel
