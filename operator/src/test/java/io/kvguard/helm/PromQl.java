package io.kvguard.helm;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A PromQL parser for what alert rules and dashboards use: selectors with matchers, range
 * selectors, offsets, functions, aggregations with by/without, binary operators with
 * bool/on/ignoring/group_left/group_right, and Prometheus' precedence. It checks value types
 * (rate() needs a range vector, sum() an instant vector, ...) and rejects unknown functions, so a
 * typo fails here instead of in Prometheus. It answers which metric names and label names an
 * expression uses. No Java PromQL parser is on Maven Central, hence this one.
 */
public final class PromQl {

  /** What an expression yields. */
  enum Type {
    SCALAR,
    INSTANT,
    RANGE,
    STRING
  }

  /** The metric and label names one expression refers to. */
  public record Names(Set<String> metrics, Set<String> labels) {}

  private static final Set<String> AGGREGATIONS =
      Set.of(
          "sum",
          "min",
          "max",
          "avg",
          "count",
          "stddev",
          "stdvar",
          "group",
          "topk",
          "bottomk",
          "quantile",
          "count_values",
          "limitk",
          "limit_ratio");
  private static final Set<String> AGGREGATIONS_WITH_PARAMETER =
      Set.of("topk", "bottomk", "quantile", "count_values", "limitk", "limit_ratio");
  private static final Set<String> RANGE_FUNCTIONS =
      Set.of(
          "rate",
          "irate",
          "increase",
          "delta",
          "idelta",
          "changes",
          "resets",
          "deriv",
          "absent_over_time",
          "present_over_time",
          "avg_over_time",
          "min_over_time",
          "max_over_time",
          "sum_over_time",
          "count_over_time",
          "last_over_time",
          "stddev_over_time",
          "stdvar_over_time",
          "quantile_over_time");
  private static final Set<String> INSTANT_FUNCTIONS =
      Set.of(
          "abs",
          "absent",
          "ceil",
          "floor",
          "round",
          "sort",
          "sort_desc",
          "clamp_min",
          "clamp_max",
          "clamp",
          "histogram_quantile",
          "label_replace",
          "label_join",
          "scalar",
          "timestamp",
          "exp",
          "ln",
          "log2",
          "log10",
          "sqrt",
          "sgn");
  private static final Set<String> KEYWORDS =
      Set.of(
          "by",
          "without",
          "on",
          "ignoring",
          "group_left",
          "group_right",
          "bool",
          "offset",
          "and",
          "or",
          "unless",
          "atan2");

  private static final Pattern TOKEN =
      Pattern.compile(
          String.join(
              "|",
              "(?<space>\\s+)",
              "(?<duration>(?:[0-9]+(?:ms|s|m|h|d|w|y))+)(?![A-Za-z0-9_])",
              "(?<number>[0-9]+(?:\\.[0-9]+)?(?:[eE][-+]?[0-9]+)?|\\.[0-9]+)",
              "(?<string>\"(?:[^\"\\\\]|\\\\.)*\"|'(?:[^'\\\\]|\\\\.)*')",
              "(?<ident>[A-Za-z_][A-Za-z0-9_:]*)",
              "(?<op>==|!=|=~|!~|>=|<=|[-+*/%^<>=(){}\\[\\],:@])"));

  private final List<String> tokens;
  private int position;
  private final Set<String> metrics = new TreeSet<>();
  private final Set<String> labels = new TreeSet<>();

  private PromQl(List<String> tokens) {
    this.tokens = tokens;
  }

  /** Parses one expression; throws IllegalArgumentException saying where it went wrong. */
  public static Names parse(String expression) {
    PromQl parser = new PromQl(tokenize(expression));
    Type type = parser.expression();
    if (parser.position != parser.tokens.size()) {
      throw parser.error("unexpected '" + parser.peek() + "'");
    }
    if (type == Type.RANGE || type == Type.STRING) {
      throw new IllegalArgumentException(
          "an expression must yield an instant vector or a scalar, not a "
              + type
              + ": "
              + expression);
    }
    return new Names(Set.copyOf(parser.metrics), Set.copyOf(parser.labels));
  }

  private static List<String> tokenize(String expression) {
    List<String> tokens = new ArrayList<>();
    Matcher m = TOKEN.matcher(expression);
    int at = 0;
    while (at < expression.length()) {
      if (!m.find(at) || m.start() != at) {
        throw new IllegalArgumentException(
            "cannot read '" + expression.substring(at) + "' in: " + expression);
      }
      if (m.group("space") == null) {
        tokens.add(m.group());
      }
      at = m.end();
    }
    return tokens;
  }

  // Precedence, lowest first: or; and unless; comparisons; + -; * / % atan2; ^ (right-associative).
  private Type expression() {
    return binary(0);
  }

  private static final List<Set<String>> LEVELS =
      List.of(
          Set.of("or"),
          Set.of("and", "unless"),
          Set.of("==", "!=", ">", "<", ">=", "<="),
          Set.of("+", "-"),
          Set.of("*", "/", "%", "atan2"),
          Set.of("^"));

  private Type binary(int level) {
    if (level == LEVELS.size()) {
      return unary();
    }
    Type left = binary(level + 1);
    while (peek() != null && LEVELS.get(level).contains(peek())) {
      String operator = next();
      boolean comparison = level == 2;
      boolean setOperator = level <= 1;
      if (accept("bool") && !comparison) {
        throw error("bool is only allowed after a comparison");
      }
      if (accept("on") || accept("ignoring")) {
        labelList();
        if (accept("group_left") || accept("group_right")) {
          if (setOperator) {
            throw error("group modifiers are not allowed with " + operator);
          }
          if ("(".equals(peek())) {
            labelList();
          }
        }
      }
      Type right = level == LEVELS.size() - 1 ? binary(level) : binary(level + 1);
      left = combine(operator, left, right, setOperator);
    }
    return left;
  }

  private Type combine(String operator, Type left, Type right, boolean setOperator) {
    for (Type side : List.of(left, right)) {
      if (side == Type.RANGE || side == Type.STRING) {
        throw error("'" + operator + "' cannot take a " + side);
      }
    }
    if (setOperator && (left != Type.INSTANT || right != Type.INSTANT)) {
      throw error("'" + operator + "' needs instant vectors on both sides");
    }
    return left == Type.SCALAR && right == Type.SCALAR ? Type.SCALAR : Type.INSTANT;
  }

  private Type unary() {
    if ("-".equals(peek()) || "+".equals(peek())) {
      next();
      Type operand = unary();
      if (operand == Type.RANGE || operand == Type.STRING) {
        throw error("a sign cannot apply to a " + operand);
      }
      return operand;
    }
    return postfix(primary());
  }

  private Type postfix(Type type) {
    if ("[".equals(peek())) {
      next();
      duration();
      if (accept(":")) {
        if (!"]".equals(peek())) {
          duration();
        }
        if (type != Type.INSTANT) {
          throw error("a subquery needs an instant vector");
        }
      } else if (type != Type.INSTANT) {
        throw error("a range needs an instant vector selector");
      }
      expect("]");
      type = Type.RANGE;
    }
    if (accept("offset")) {
      accept("-");
      duration();
    }
    return type;
  }

  private Type primary() {
    String token = next();
    if (token == null) {
      throw error("the expression ends too early");
    }
    if (token.equals("(")) {
      Type inner = expression();
      expect(")");
      return inner;
    }
    if (token.equals("{")) {
      matchers(true);
      return Type.INSTANT;
    }
    if (Character.isDigit(token.charAt(0)) || token.charAt(0) == '.') {
      if (!token
          .chars()
          .allMatch(
              c ->
                  Character.isDigit(c)
                      || c == '.'
                      || c == 'e'
                      || c == 'E'
                      || c == '-'
                      || c == '+')) {
        throw error("a duration is not a number: " + token);
      }
      return Type.SCALAR;
    }
    if (token.startsWith("\"") || token.startsWith("'")) {
      return Type.STRING;
    }
    if (!Character.isLetter(token.charAt(0)) && token.charAt(0) != '_') {
      throw error("unexpected '" + token + "'");
    }
    if (AGGREGATIONS.contains(token)) {
      return aggregation(token);
    }
    if ("(".equals(peek())) {
      return function(token);
    }
    if (KEYWORDS.contains(token)) {
      throw error("'" + token + "' is a keyword, not a metric");
    }
    metrics.add(token);
    if ("{".equals(peek())) {
      next();
      matchers(false);
    }
    return Type.INSTANT;
  }

  private Type aggregation(String name) {
    boolean grouped = false;
    if (accept("by") || accept("without")) {
      labelList();
      grouped = true;
    }
    expect("(");
    if (AGGREGATIONS_WITH_PARAMETER.contains(name)) {
      Type parameter = expression();
      if (parameter != Type.SCALAR && parameter != Type.STRING) {
        throw error(name + " needs a scalar or string parameter first");
      }
      expect(",");
    }
    Type operand = expression();
    expect(")");
    if (operand != Type.INSTANT) {
      throw error(name + "() needs an instant vector, got a " + operand);
    }
    if (accept("by") || accept("without")) {
      if (grouped) {
        throw error(name + " has two grouping clauses");
      }
      labelList();
    }
    return Type.INSTANT;
  }

  private Type function(String name) {
    expect("(");
    List<Type> arguments = new ArrayList<>();
    if (!")".equals(peek())) {
      arguments.add(expression());
      while (accept(",")) {
        arguments.add(expression());
      }
    }
    expect(")");
    if (name.equals("vector")) {
      requireArguments(name, arguments, List.of(Type.SCALAR));
      return Type.INSTANT;
    }
    if (name.equals("time")) {
      requireArguments(name, arguments, List.of());
      return Type.SCALAR;
    }
    if (RANGE_FUNCTIONS.contains(name)) {
      if (arguments.isEmpty() || arguments.get(arguments.size() - 1) != Type.RANGE) {
        throw error(name + "() needs a range vector, e.g. " + name + "(metric[5m])");
      }
      return Type.INSTANT;
    }
    if (INSTANT_FUNCTIONS.contains(name)) {
      if (arguments.isEmpty()) {
        throw error(name + "() needs an argument");
      }
      int vectorArgument = name.equals("histogram_quantile") ? 1 : 0;
      if (arguments.size() <= vectorArgument || arguments.get(vectorArgument) != Type.INSTANT) {
        throw error(name + "() needs an instant vector");
      }
      return name.equals("scalar") ? Type.SCALAR : Type.INSTANT;
    }
    throw error("unknown function " + name + "()");
  }

  private void requireArguments(String name, List<Type> actual, List<Type> wanted) {
    if (!actual.equals(wanted)) {
      throw error(name + "() takes " + wanted + ", got " + actual);
    }
  }

  private void matchers(boolean needsName) {
    boolean any = false;
    while (!"}".equals(peek())) {
      String label = next();
      if (label == null || !label.matches("[A-Za-z_][A-Za-z0-9_]*")) {
        throw error("a label name was expected, got '" + label + "'");
      }
      String operator = next();
      if (operator == null || !Set.of("=", "!=", "=~", "!~").contains(operator)) {
        throw error("a matcher operator was expected after " + label + ", got '" + operator + "'");
      }
      String value = next();
      if (value == null || !(value.startsWith("\"") || value.startsWith("'"))) {
        throw error("the value of " + label + " must be a string");
      }
      if (label.equals("__name__")) {
        metrics.add(value.substring(1, value.length() - 1));
      } else {
        labels.add(label);
      }
      any = true;
      if (!accept(",")) {
        break;
      }
    }
    expect("}");
    if (needsName && !any) {
      throw error("a selector needs at least one matcher");
    }
  }

  private void labelList() {
    expect("(");
    while (!")".equals(peek())) {
      String label = next();
      if (label == null || !label.matches("[A-Za-z_][A-Za-z0-9_]*")) {
        throw error("a label name was expected, got '" + label + "'");
      }
      labels.add(label);
      if (!accept(",")) {
        break;
      }
    }
    expect(")");
  }

  private void duration() {
    String token = next();
    if (token == null || !token.matches("([0-9]+(ms|s|m|h|d|w|y))+")) {
      throw error("a duration such as 5m was expected, got '" + token + "'");
    }
  }

  private String peek() {
    return position < tokens.size() ? tokens.get(position) : null;
  }

  private String next() {
    return position < tokens.size() ? tokens.get(position++) : null;
  }

  private boolean accept(String token) {
    if (token.equals(peek())) {
      position++;
      return true;
    }
    return false;
  }

  private void expect(String token) {
    if (!accept(token)) {
      throw error("'" + token + "' was expected, got '" + peek() + "'");
    }
  }

  private IllegalArgumentException error(String message) {
    return new IllegalArgumentException(
        message + " (at token " + position + " of " + String.join(" ", tokens) + ")");
  }
}
