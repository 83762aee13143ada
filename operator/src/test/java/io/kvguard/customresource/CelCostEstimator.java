package io.kvguard.customresource;

import dev.cel.common.CelValidationException;
import dev.cel.common.ast.CelConstant;
import dev.cel.common.ast.CelExpr;
import dev.cel.common.types.SimpleType;
import dev.cel.compiler.CelCompiler;
import dev.cel.compiler.CelCompilerFactory;
import dev.cel.parser.CelStandardMacro;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The worst-case cost a real API server estimates for one x-kubernetes-validations rule before it
 * admits a CRD ({@code CompilationResult.MaxCost}). A re-statement, for the CEL forms kvguard's CRD
 * uses, of
 *
 * <ul>
 *   <li>google/cel-go v0.26.0 (the version Kubernetes 1.36 builds with) {@code checker/cost.go}:
 *       the {@code coster}: identifiers and field selections cost 1, constants 0; a comprehension
 *       costs its range, its init and its result plus (range size × (loop condition + step));
 *       {@code _==_}, {@code _!=_} and string orderings cost ⌈min(size of each side) × 0.1⌉; {@code
 *       matches} costs ⌈(size + 1) × 0.1⌉ × ⌈regex length × 0.25⌉; {@code &&}/{@code ||} their two
 *       sides; {@code ?:} its condition plus the dearer branch; everything else O(1), 1 plus its
 *       arguments;
 *   <li>kubernetes/apiserver v0.36.3 {@code pkg/cel/environment/base.go}: {@code has()} costs
 *       nothing itself ({@code PresenceTestHasCost(false)}), and {@code pkg/cel/library/cost.go},
 *       which adds costs only for Kubernetes' own library functions (none of which this estimator
 *       accepts);
 *   <li>kubernetes/apiextensions-apiserver v0.36.3 {@code pkg/apiserver/schema/cel/compilation.go}
 *       {@code sizeEstimator}: the size of a value reached from {@code self} is its schema node's
 *       MaxElements (CelDeclType), whatever the first path element is.
 * </ul>
 *
 * A form it does not know (a function, a macro such as cel.bind, a map literal, a string format)
 * fails the estimate with {@link UnmodelledForm}, so a new rule cannot pass unmeasured.
 */
final class CelCostEstimator {
  private static final double STRING_TRAVERSAL_COST_FACTOR = 0.1; // common/cost.go
  private static final double REGEX_STRING_LENGTH_COST_FACTOR = 0.25; // common/cost.go
  private static final long LIST_CREATE_BASE_COST = 10; // common/cost.go
  private static final Set<String> TYPE_NAMES =
      Set.of(
          "int",
          "uint",
          "double",
          "bool",
          "string",
          "bytes",
          "list",
          "map",
          "null_type",
          "type",
          "dyn");
  private static final CelCompiler PARSER =
      CelCompilerFactory.standardCelCompilerBuilder()
          .setStandardMacros(CelStandardMacro.STANDARD_MACROS)
          .addVar("self", SimpleType.DYN)
          .build();

  /**
   * A rule this estimator cannot price the way the API server would: the test must fail, not guess.
   */
  static final class UnmodelledForm extends RuntimeException {
    UnmodelledForm(String message) {
      super(message);
    }
  }

  record Size(long min, long max) {
    static final Size UNKNOWN = new Size(0, Uint64.MAX);

    static Size fixed(long n) {
      return new Size(n, n);
    }

    Size union(Size o) {
      return new Size(Uint64.min(min, o.min), Uint64.max(max, o.max));
    }

    Size add(Size o) {
      return new Size(Uint64.add(min, o.min), Uint64.add(max, o.max));
    }
  }

  record Cost(long min, long max) {
    static final Cost ZERO = new Cost(0, 0);

    static Cost fixed(long n) {
      return new Cost(n, n);
    }

    Cost add(Cost o) {
      return new Cost(Uint64.add(min, o.min), Uint64.add(max, o.max));
    }

    Cost multiply(Cost o) {
      return new Cost(Uint64.multiply(min, o.min), Uint64.multiply(max, o.max));
    }

    Cost union(Cost o) {
      return new Cost(Uint64.min(min, o.min), Uint64.max(max, o.max));
    }

    static Cost ofSize(Size s, double factor) {
      return new Cost(
          Uint64.multiplyByFactor(s.min, factor), Uint64.multiplyByFactor(s.max, factor));
    }

    static Cost sizeTimesCost(Size s, Cost c) {
      return new Cost(Uint64.multiply(s.min, c.min), Uint64.multiply(s.max, c.max));
    }
  }

  /** The checker's type of an expression, as far as the cost rules read it. */
  enum Kind {
    BOOL,
    INT,
    UINT,
    DOUBLE,
    STRING,
    BYTES,
    NULL,
    LIST,
    MAP,
    STRUCT,
    DYN,
    TYPE
  }

  record Type(Kind kind, Type elem, CelDeclType decl) {
    static Type of(Kind kind) {
      return new Type(kind, null, null);
    }

    static Type of(CelDeclType d) {
      if (d.kind == CelDeclType.Kind.UNMODELLED) {
        throw new UnmodelledForm(d.unmodelled);
      }
      return switch (d.kind) {
        case OBJECT -> new Type(Kind.STRUCT, null, d);
        case LIST -> new Type(Kind.LIST, of(d.elem), d);
        case MAP -> new Type(Kind.MAP, of(d.elem), d);
        case STRING -> new Type(Kind.STRING, null, d);
        case BYTES -> new Type(Kind.BYTES, null, d);
        case INT -> new Type(Kind.INT, null, d);
        case DOUBLE -> new Type(Kind.DOUBLE, null, d);
        case BOOL -> new Type(Kind.BOOL, null, d);
        case INT_OR_STRING -> new Type(Kind.DYN, null, d);
        case UNMODELLED -> throw new UnmodelledForm(d.unmodelled);
      };
    }

    boolean scalar() {
      return kind == Kind.BOOL || kind == Kind.INT || kind == Kind.UINT || kind == Kind.DOUBLE;
    }
  }

  /** A list literal's entry size (entrySizeEstimate). */
  record EntrySize(Size key, Size val) {}

  private record LocalVar(List<String> path, Size size, EntrySize entrySize, Type type) {}

  private final CelDeclType root;
  private final Map<Long, List<String>> paths = new HashMap<>();
  private final Map<Long, Size> sizes = new HashMap<>();
  private final Map<Long, EntrySize> entrySizes = new HashMap<>();
  private final Map<Long, Type> types = new HashMap<>();
  private final Map<String, Deque<LocalVar>> locals = new HashMap<>();

  private CelCostEstimator(CelDeclType root) {
    this.root = root;
  }

  /**
   * The rule's estimated maximum cost when {@code self} (and {@code oldSelf}) has the given schema
   * node's type.
   */
  static long maxCost(String rule, CelDeclType self) {
    CelExpr expr;
    try {
      expr = PARSER.parse(rule).getAst().getExpr();
    } catch (CelValidationException e) {
      throw new UnmodelledForm("rule does not parse: " + e.getMessage());
    }
    return new CelCostEstimator(self).cost(expr).max();
  }

  private Cost cost(CelExpr e) {
    return switch (e.getKind()) {
      case CONSTANT -> constant(e);
      case IDENT -> ident(e);
      case SELECT -> select(e);
      case CALL -> call(e);
      case LIST -> list(e);
      case COMPREHENSION -> comprehension(e);
      default -> throw new UnmodelledForm(e.getKind() + " expressions (" + e + ")");
    };
  }

  private Cost constant(CelExpr e) {
    CelConstant c = e.constant();
    types.put(
        e.id(),
        Type.of(
            switch (c.getKind()) {
              case BOOLEAN_VALUE -> Kind.BOOL;
              case INT64_VALUE -> Kind.INT;
              case UINT64_VALUE -> Kind.UINT;
              case DOUBLE_VALUE -> Kind.DOUBLE;
              case STRING_VALUE -> Kind.STRING;
              case BYTES_VALUE -> Kind.BYTES;
              case NULL_VALUE -> Kind.NULL;
              default -> throw new UnmodelledForm("constant " + c.getKind());
            }));
    return Cost.ZERO; // constCost
  }

  private Cost ident(CelExpr e) {
    String name = e.ident().name();
    LocalVar local = peek(name);
    if (local != null) {
      paths.put(e.id(), local.path());
      types.put(e.id(), local.type());
    } else if (name.equals("self") || name.equals("oldSelf")) {
      paths.put(e.id(), List.of(name));
      types.put(e.id(), Type.of(root));
    } else if (TYPE_NAMES.contains(name)) {
      // A type name is an identifier too; its path [name] leads the sizeEstimator to the root
      // node's size.
      paths.put(e.id(), List.of(name));
      types.put(e.id(), Type.of(Kind.TYPE));
    } else {
      throw new UnmodelledForm("identifier " + name);
    }
    return Cost.fixed(1); // selectAndIdentCost
  }

  private Cost select(CelExpr e) {
    var select = e.select();
    if (select.testOnly()) {
      types.put(e.id(), Type.of(Kind.BOOL));
      return Cost.ZERO.add(
          cost(select.operand())); // has(): PresenceTestHasCost(false) in Kubernetes
    }
    Cost sum = cost(select.operand());
    Type operand = types.get(select.operand().id());
    Type result;
    switch (operand.kind()) {
      case STRUCT -> {
        sum = sum.add(Cost.fixed(1));
        CelDeclType field = operand.decl().fields.get(select.field());
        if (field == null) {
          throw new UnmodelledForm(
              "field "
                  + select.field()
                  + " is not in the schema (the API server would not compile it)");
        }
        result = Type.of(field);
      }
      case MAP -> {
        sum = sum.add(Cost.fixed(1));
        result = operand.elem();
      }
      case DYN -> result = Type.of(Kind.DYN);
      default -> throw new UnmodelledForm("selecting ." + select.field() + " on " + operand.kind());
    }
    types.put(e.id(), result);
    List<String> path = new ArrayList<>(pathOf(select.operand()));
    path.add(select.field());
    paths.put(e.id(), path);
    return sum;
  }

  private Cost list(CelExpr e) {
    Cost sum = Cost.ZERO;
    Size itemSize = e.list().elements().isEmpty() ? new Size(0, 0) : new Size(Uint64.MAX, 0);
    Type elem = null;
    for (CelExpr item : e.list().elements()) {
      sum = sum.add(cost(item));
      itemSize = itemSize.union(sizeOrUnknown(item));
      Type t = types.get(item.id());
      elem = elem == null || elem.kind() == t.kind() ? t : Type.of(Kind.DYN);
    }
    entrySizes.put(e.id(), new EntrySize(Size.fixed(1), itemSize));
    types.put(e.id(), new Type(Kind.LIST, elem == null ? Type.of(Kind.DYN) : elem, null));
    return sum.add(Cost.fixed(LIST_CREATE_BASE_COST));
  }

  private Cost comprehension(CelExpr e) {
    var c = e.comprehension();
    if (c.iterRange().getKind() == CelExpr.ExprKind.Kind.LIST
        && c.iterRange().list().elements().isEmpty()
        && !c.accuVar().equals("@result")
        && !c.accuVar().equals("__result__")) {
      throw new UnmodelledForm("cel.bind");
    }
    if (c.iterVar2() != null && !c.iterVar2().isEmpty()) {
      throw new UnmodelledForm("two-variable comprehensions");
    }
    Cost sum = cost(c.iterRange()).add(cost(c.accuInit()));
    push(
        c.accuVar(),
        new LocalVar(
            pathOf(c.accuInit()),
            computeSize(c.accuInit()),
            entrySizeOf(c.accuInit()),
            types.get(c.accuInit().id())));
    Type range = types.get(c.iterRange().id());
    EntrySize entry = entrySizeOf(c.iterRange());
    List<String> iterPath = new ArrayList<>(pathOf(c.iterRange()));
    Type iterType;
    Size iterSize;
    switch (range.kind()) {
      case LIST -> {
        iterPath.add("@items");
        iterType = range.elem();
        iterSize = entry == null ? null : entry.val();
      }
      case MAP -> {
        iterPath.add("@keys");
        iterType = Type.of(Kind.STRING);
        iterSize = entry == null ? null : entry.key();
      }
      default -> throw new UnmodelledForm("a comprehension over " + range.kind());
    }
    push(c.iterVar(), new LocalVar(iterPath, iterSize, null, iterType));
    Cost loop = cost(c.loopCondition());
    Cost step = cost(c.loopStep());
    pop(c.iterVar());
    sum = sum.add(cost(c.result()));
    pop(c.accuVar());
    Size rangeCount = sizeOrUnknown(c.iterRange());
    sum = sum.add(Cost.sizeTimesCost(rangeCount, step.add(loop)));
    switch (c.accuInit().getKind()) {
      case CONSTANT -> {
        Size s = computeSize(c.accuInit());
        if (s != null) {
          sizes.put(e.id(), s);
        }
      }
      case LIST, MAP -> sizes.put(e.id(), rangeCount);
      default -> {}
    }
    types.put(e.id(), types.get(c.result().id()));
    return sum;
  }

  private Cost call(CelExpr e) {
    var call = e.call();
    String fn = call.function();
    List<CelExpr> args = call.args();
    List<Cost> argCosts = new ArrayList<>();
    for (CelExpr arg : args) {
      argCosts.add(cost(arg));
    }
    Cost argSum = argCosts.stream().reduce(Cost.ZERO, Cost::add);
    Cost sum = Cost.ZERO;
    CelExpr target = call.target().orElse(null);
    if (target != null) {
      sum = sum.add(cost(target));
    }
    Size resultSize = null;
    Cost fnCost;
    Kind result = Kind.BOOL;
    switch (fn) {
      case "_&&_", "_||_" ->
          fnCost = new Cost(argCosts.get(0).min(), argCosts.get(0).add(argCosts.get(1)).max());
      case "_?_:_" -> {
        fnCost = argCosts.get(0).add(argCosts.get(1).union(argCosts.get(2)));
        resultSize = sizeOrUnknown(args.get(1)).union(sizeOrUnknown(args.get(2)));
        Type t = types.get(args.get(1).id());
        Type f = types.get(args.get(2).id());
        types.put(e.id(), t.kind() == f.kind() ? t : Type.of(Kind.DYN));
      }
      case "_==_", "_!=_" -> fnCost = sizeComparison(args).add(argSum);
      case "_<_", "_<=_", "_>_", "_>=_" -> {
        Kind l = types.get(args.get(0).id()).kind();
        Kind r = types.get(args.get(1).id()).kind();
        boolean stringLike = textual(l) && textual(r);
        boolean otherLike = !isText(l) && !isText(r);
        if (!stringLike && !otherLike) {
          throw new UnmodelledForm("ordering " + l + " against " + r);
        }
        Cost c = stringLike ? sizeComparison(args) : null;
        Cost o = otherLike ? Cost.fixed(1) : null;
        fnCost = (c == null ? o : o == null ? c : c.union(o)).add(argSum);
      }
      case "_+_" -> {
        Kind l = types.get(args.get(0).id()).kind();
        Kind r = types.get(args.get(1).id()).kind();
        if (numeric(l) && numeric(r)) {
          fnCost = Cost.fixed(1).add(argSum);
          result = l == Kind.DYN ? r : l;
        } else if (l == Kind.STRING && r == Kind.STRING) {
          resultSize = sizeOrUnknown(args.get(0)).add(sizeOrUnknown(args.get(1)));
          fnCost = Cost.ofSize(resultSize, STRING_TRAVERSAL_COST_FACTOR).add(argSum);
          result = Kind.STRING;
        } else {
          throw new UnmodelledForm("_+_ on " + l + " and " + r);
        }
      }
      case "_-_", "_*_", "_/_", "_%_", "-_" -> {
        for (CelExpr arg : args) {
          if (!numeric(types.get(arg.id()).kind())) {
            throw new UnmodelledForm(fn + " on " + types.get(arg.id()).kind());
          }
        }
        fnCost = Cost.fixed(1).add(argSum);
        result = types.get(args.get(0).id()).kind();
      }
      case "!_", "@not_strictly_false" -> fnCost = Cost.fixed(1).add(argSum);
      case "size" -> {
        fnCost = Cost.fixed(1).add(argSum);
        result = Kind.INT;
      }
      case "type" -> {
        fnCost = Cost.fixed(1).add(argSum);
        result = Kind.TYPE;
      }
      case "matches" -> {
        if (target == null) {
          throw new UnmodelledForm(
              "matches() in its global form (the API server prices it as O(1); write s.matches(re))");
        }
        requireText(target, "matches");
        Cost str =
            Cost.ofSize(sizeOrUnknown(target).add(Size.fixed(1)), STRING_TRAVERSAL_COST_FACTOR);
        Cost regex = Cost.ofSize(sizeOrUnknown(args.get(0)), REGEX_STRING_LENGTH_COST_FACTOR);
        fnCost = str.multiply(regex).add(argSum);
      }
      case "contains" -> {
        if (target == null) {
          throw new UnmodelledForm("contains() without a receiver");
        }
        requireText(target, "contains");
        Cost str = Cost.ofSize(sizeOrUnknown(target), STRING_TRAVERSAL_COST_FACTOR);
        Cost sub = Cost.ofSize(sizeOrUnknown(args.get(0)), STRING_TRAVERSAL_COST_FACTOR);
        fnCost = str.multiply(sub).add(argSum);
      }
      case "startsWith", "endsWith" -> {
        if (target == null) {
          throw new UnmodelledForm(fn + "() without a receiver");
        }
        requireText(target, fn);
        fnCost = Cost.ofSize(sizeOrUnknown(args.get(0)), STRING_TRAVERSAL_COST_FACTOR).add(argSum);
      }
      case "@in" -> {
        Kind container = types.get(args.get(1).id()).kind();
        if (container == Kind.LIST) {
          fnCost = Cost.ofSize(sizeOrUnknown(args.get(1)), 1).add(argSum);
        } else if (container == Kind.MAP) {
          fnCost = Cost.fixed(1).add(argSum);
        } else {
          throw new UnmodelledForm("'in' on " + container);
        }
      }
      case "_[_]" -> {
        Type container = types.get(args.get(0).id());
        List<String> path = new ArrayList<>(pathOf(args.get(0)));
        EntrySize entry = entrySizeOf(args.get(0));
        switch (container.kind()) {
          case LIST -> path.add("@items");
          case MAP -> path.add("@values");
          default -> throw new UnmodelledForm("indexing " + container.kind());
        }
        fnCost = Cost.fixed(1).add(argSum);
        resultSize = entry == null ? null : entry.val();
        paths.put(e.id(), path);
        types.put(e.id(), container.elem());
      }
      default -> throw new UnmodelledForm("function " + fn);
    }
    types.putIfAbsent(e.id(), Type.of(result));
    if (resultSize == null) {
      resultSize = computeSize(e);
    }
    if (resultSize != null) {
      sizes.put(e.id(), resultSize);
    }
    return sum.add(fnCost);
  }

  /**
   * Equality and string ordering: ⌈min(max size of each side) × 0.1⌉, at least 1 when both can be
   * non-empty.
   */
  private Cost sizeComparison(List<CelExpr> args) {
    Size lhs = sizeOrUnknown(args.get(0));
    Size rhs = sizeOrUnknown(args.get(1));
    long smallestMax = Uint64.min(lhs.max(), rhs.max());
    long min = smallestMax != 0 ? 1 : 0;
    return Cost.ofSize(new Size(min, smallestMax), STRING_TRAVERSAL_COST_FACTOR);
  }

  private void requireText(CelExpr target, String fn) {
    Kind k = types.get(target.id()).kind();
    if (!textual(k)) {
      throw new UnmodelledForm(fn + "() on " + k);
    }
  }

  private static boolean isText(Kind k) {
    return k == Kind.STRING || k == Kind.BYTES;
  }

  private static boolean textual(Kind k) {
    return k == Kind.STRING || k == Kind.BYTES || k == Kind.DYN;
  }

  private static boolean numeric(Kind k) {
    return k == Kind.INT || k == Kind.UINT || k == Kind.DOUBLE || k == Kind.DYN;
  }

  private Size sizeOrUnknown(CelExpr e) {
    Size s = computeSize(e);
    return s == null ? Size.UNKNOWN : s;
  }

  /**
   * coster.computeSize: a computed size, a literal's size, the schema's size for the path, a
   * scalar's 1.
   */
  private Size computeSize(CelExpr e) {
    Size known = sizes.get(e.id());
    if (known != null) {
      return known;
    }
    Size literal = literalSize(e);
    if (literal != null) {
      return literal;
    }
    Size fromSchema = schemaSize(pathOf(e));
    if (fromSchema != null) {
      sizes.put(e.id(), fromSchema);
      return fromSchema;
    }
    Type t = types.get(e.id());
    if (t != null && t.scalar()) {
      return Size.fixed(1);
    }
    if (e.getKind() == CelExpr.ExprKind.Kind.IDENT) {
      LocalVar local = peek(e.ident().name());
      if (local != null && local.size() != null) {
        return local.size();
      }
    }
    return null;
  }

  private static Size literalSize(CelExpr e) {
    return switch (e.getKind()) {
      case CONSTANT ->
          switch (e.constant().getKind()) {
            case STRING_VALUE ->
                Size.fixed(
                    e.constant()
                        .stringValue()
                        .codePointCount(0, e.constant().stringValue().length()));
            case BYTES_VALUE -> Size.fixed(e.constant().bytesValue().size());
            default -> Size.fixed(1);
          };
      case LIST -> Size.fixed(e.list().elements().size());
      default -> null;
    };
  }

  /**
   * compilation.go sizeEstimator.EstimateSize: walk the path after its first element from the
   * rule's node.
   */
  private Size schemaSize(List<String> path) {
    if (path.isEmpty()) {
      return null;
    }
    CelDeclType node = root;
    for (String name : path.subList(1, path.size())) {
      switch (name) {
        case "@items", "@values" -> node = node.elem;
        case "@keys" -> node = node.key;
        default -> node = node.fields.get(name);
      }
      if (node == null) {
        return null;
      }
    }
    if (node.kind == CelDeclType.Kind.UNMODELLED) {
      throw new UnmodelledForm(node.unmodelled);
    }
    return new Size(0, node.maxElements);
  }

  /** coster.computeEntrySize: a list literal's, or a local variable's. */
  private EntrySize entrySizeOf(CelExpr e) {
    EntrySize known = entrySizes.get(e.id());
    if (known == null && e.getKind() == CelExpr.ExprKind.Kind.IDENT) {
      LocalVar local = peek(e.ident().name());
      return local == null ? null : local.entrySize();
    }
    return known;
  }

  private List<String> pathOf(CelExpr e) {
    if (e.getKind() == CelExpr.ExprKind.Kind.IDENT) {
      LocalVar local = peek(e.ident().name());
      if (local != null) {
        return local.path();
      }
    }
    return paths.getOrDefault(e.id(), List.of());
  }

  private void push(String name, LocalVar v) {
    locals.computeIfAbsent(name, k -> new ArrayDeque<>()).push(v);
  }

  private void pop(String name) {
    locals.get(name).pop();
  }

  private LocalVar peek(String name) {
    Deque<LocalVar> stack = locals.get(name);
    return stack == null || stack.isEmpty() ? null : stack.peek();
  }
}
