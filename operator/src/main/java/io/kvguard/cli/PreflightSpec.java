package io.kvguard.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.fasterxml.jackson.dataformat.yaml.YAMLParser;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import io.kvguard.customresource.Engine;
import io.kvguard.customresource.ModelDeployment;
import io.kvguard.customresource.ModelDeploymentSpec;
import io.kvguard.customresource.RoleSpec;
import io.kvguard.reconciler.RolePolicies;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * The spec {@code check} judges an engine against, read as the operator reads it ({@link
 * RolePolicies}): a ModelDeployment from a YAML file ({@code --model-deployment}, one role of it),
 * or one built from the flags, which then has every other field at the default a ModelDeployment
 * gets (engine advisories on, no minimum version).
 *
 * @param fromFile whether the spec came from {@code --model-deployment}
 * @param namespace the ModelDeployment's namespace when its file names one, else null
 */
record PreflightSpec(ModelDeploymentSpec spec, RoleSpec role, boolean fromFile, String namespace) {
  /**
   * Flags whose settings a ModelDeployment file carries; given both, which one counts would be a
   * guess.
   */
  private static final List<String> SPEC_FLAGS =
      List.of("engine", "context-window", "min-pool-ratio", "allow-engine-context-above-pool");

  private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());

  static PreflightSpec fromFlags(Arguments args) throws UsageException {
    if (args.flag("role")) {
      throw new UsageException("--role needs --model-deployment");
    }
    Engine engine = CheckCommand.engine(args.required("engine"));
    long window = args.longValue("context-window", -1, 1, Long.MAX_VALUE);
    if (window < 0) {
      throw new UsageException(
          "--context-window is required (the tokens the service promises its clients)");
    }
    double ratio = args.doubleValue("min-pool-ratio", 1.0, 1.0);
    RoleSpec role = new RoleSpec();
    role.setName("check");
    role.setEngine(engine);
    role.setAllowEngineContextAbovePool(args.flag("allow-engine-context-above-pool"));
    ModelDeploymentSpec spec = new ModelDeploymentSpec();
    spec.setContextWindow(window);
    spec.setMinPoolRatio(ratio);
    spec.setRoles(List.of(role));
    return new PreflightSpec(spec, role, false, null);
  }

  static PreflightSpec fromFile(Arguments args) throws UsageException {
    for (String flag : SPEC_FLAGS) {
      if (args.flag(flag)) {
        throw new UsageException(
            "--" + flag + " cannot be combined with --model-deployment (the spec says it)");
      }
    }
    Path file = Path.of(args.value("model-deployment").orElseThrow());
    ModelDeployment md = read(file);
    ModelDeploymentSpec spec = md.getSpec();
    var problem = RolePolicies.problem(spec);
    if (problem.isPresent()) {
      // The operator shuts every pod of such a spec (ProbeFailed, naming the problem); nothing to
      // judge.
      throw new UsageException(
          "--model-deployment " + file + ": kvguard cannot apply this spec: " + problem.get());
    }
    String names =
        spec.getRoles().stream().map(RoleSpec::getName).collect(Collectors.joining(", "));
    RoleSpec role;
    if (args.flag("role")) {
      String wanted = args.value("role").orElseThrow();
      role =
          spec.getRoles().stream()
              .filter(r -> r.getName().equals(wanted))
              .findFirst()
              .orElseThrow(
                  () ->
                      new UsageException(
                          "--role " + wanted + " is not a role of " + file + " (" + names + ")"));
    } else if (spec.getRoles().size() == 1) {
      role = spec.getRoles().get(0);
    } else {
      throw new UsageException(
          "--model-deployment " + file + " has roles " + names + ": name one with --role");
    }
    return new PreflightSpec(
        spec, role, true, md.getMetadata() == null ? null : md.getMetadata().getNamespace());
  }

  /**
   * The most {@code --model-deployment} reads: the API server takes no request body above 3 MiB, so
   * no ModelDeployment is larger; a file beyond it is refused before it is parsed (a long YAML
   * scalar takes the parser seconds per MiB).
   */
  static final int MAX_FILE_BYTES = 3 * 1024 * 1024;

  /**
   * The one ModelDeployment in a YAML file, which may hold other documents (a Deployment, a
   * Service).
   */
  private static ModelDeployment read(Path file) throws UsageException {
    byte[] bytes;
    try (InputStream in = Files.newInputStream(file)) {
      bytes = in.readNBytes(MAX_FILE_BYTES + 1);
    } catch (IOException | RuntimeException e) {
      throw new UsageException(
          "--model-deployment "
              + file
              + " cannot be read as YAML ("
              + e.getClass().getSimpleName()
              + ")");
    }
    if (bytes.length > MAX_FILE_BYTES) {
      throw new UsageException(
          "--model-deployment "
              + file
              + " is larger than 3 MiB, the most the API server takes"
              + " in one request: put the ModelDeployment in a file of its own");
    }
    String expected = ModelDeployment.GROUP + "/" + ModelDeployment.VERSION;
    List<JsonNode> found = new ArrayList<>();
    try {
      refuseAliases(bytes);
      try (var parser = YAML.getFactory().createParser(bytes)) {
        var documents = YAML.readValues(parser, JsonNode.class);
        while (documents.hasNext()) {
          JsonNode document = documents.next();
          if (document != null
              && "ModelDeployment".equals(document.path("kind").asText())
              && expected.equals(document.path("apiVersion").asText())) {
            found.add(document);
          }
        }
      }
    } catch (IOException | RuntimeException e) {
      throw new UsageException(
          "--model-deployment "
              + file
              + " cannot be read as YAML ("
              + e.getClass().getSimpleName()
              + ")");
    }
    if (found.size() != 1) {
      throw new UsageException(
          "--model-deployment "
              + file
              + " holds "
              + found.size()
              + " ModelDeployments, expected one (apiVersion "
              + expected
              + ")");
    }
    Optional<String> refused = CrdSchema.violation(found.get(0));
    if (refused.isPresent()) {
      throw new UsageException(
          "--model-deployment "
              + file
              + ": the API server would refuse this ModelDeployment: "
              + refused.get());
    }
    try {
      ModelDeployment md =
          new KubernetesSerialization().convertValue(found.get(0), ModelDeployment.class);
      if (md.getSpec() == null) {
        throw new UsageException(
            "--model-deployment " + file + ": the ModelDeployment has no spec");
      }
      return md;
    } catch (IllegalArgumentException e) {
      throw new UsageException(
          "--model-deployment "
              + file
              + " is not a valid ModelDeployment ("
              + e.getClass().getSimpleName()
              + ")");
    }
  }

  /**
   * Jackson's YAML reader gives an alias ({@code *name}) as the string "name", not the value it
   * stands for: a spec with aliases would be judged with other values than kubectl applies.
   * Manifests seldom use them; refuse them.
   */
  private static void refuseAliases(byte[] bytes) throws IOException, UsageException {
    try (var parser = (YAMLParser) YAML.getFactory().createParser(bytes)) {
      while (parser.nextToken() != null) {
        if (parser.isCurrentAlias()) {
          throw new UsageException(
              "--model-deployment holds a YAML alias (*"
                  + parser.getText()
                  + "), which check"
                  + " does not expand: write the values out");
        }
      }
    }
  }
}
