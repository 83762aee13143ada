package io.kvguard.helm;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.MappingIterator;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import com.marcnuri.helm.Helm;
import com.marcnuri.helm.TemplateCommand;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.stream.Stream;

/**
 * The chart rendered by Helm itself (helm-java embeds Helm, so values.schema.json and every {@code
 * fail} apply exactly as with {@code helm template}), parsed into fabric8 objects.
 */
public final class RenderedChart {
  public static final Path CHART = Path.of("../helm/kvguard");
  public static final String RELEASE = "kvguard";
  public static final String NAMESPACE = "kvguard-system";
  public static final String KUBE_VERSION = "1.31.0";

  /**
   * Values that render as on a cluster serving the Prometheus Operator's API (helm-java's template
   * cannot pass --api-versions; the chart's assumeApiVersions stands in for it).
   */
  public static final String MONITORING_API = "assumeApiVersions: [monitoring.coreos.com/v1]\n";

  private static final KubernetesSerialization SERIALIZATION = new KubernetesSerialization();

  /** Rejects duplicate keys, which Kubernetes' own YAML decoding refuses too. */
  private static final YAMLMapper YAML =
      YAMLMapper.builder()
          .enable(com.fasterxml.jackson.core.StreamReadFeature.STRICT_DUPLICATE_DETECTION)
          .build();

  private final List<HasMetadata> objects;

  private RenderedChart(List<HasMetadata> objects) {
    this.objects = List.copyOf(objects);
  }

  /** Renders with the chart's defaults plus the given values file content (YAML; may be empty). */
  public static RenderedChart render(String valuesYaml) {
    return parse(template(CHART, valuesYaml));
  }

  /** {@link #render(String)} as release {@code release} ({@code helm template <release>}). */
  public static RenderedChart render(String release, String valuesYaml) {
    return parse(template(CHART, release, valuesYaml, KUBE_VERSION));
  }

  /**
   * The chart's NOTES.txt as {@code helm install} prints it (a client-only dry run: nothing is
   * contacted; helm template does not render notes).
   */
  public static String notes(String valuesYaml) {
    return notes(valuesYaml, KUBE_VERSION);
  }

  /** {@link #notes(String)} on a cluster of the given Kubernetes version. */
  public static String notes(String valuesYaml, String kubeVersion) {
    try {
      Path values = Files.createTempFile("kvguard-values", ".yaml");
      try {
        Files.writeString(values, valuesYaml == null ? "" : valuesYaml, StandardCharsets.UTF_8);
        String output =
            new Helm(CHART)
                .install()
                .withName(RELEASE)
                .withNamespace(NAMESPACE)
                .withKubeVersion(kubeVersion)
                .dryRun()
                .clientOnly()
                .withValuesFile(values)
                .call()
                .getOutput();
        int notes = output.indexOf("NOTES:");
        if (notes < 0) {
          throw new AssertionError("helm printed no NOTES:\n" + output);
        }
        return output.substring(notes + "NOTES:".length());
      } finally {
        Files.deleteIfExists(values);
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * Runs {@code helm template} on a chart directory; throws IllegalStateException with Helm's
   * message on failure.
   */
  public static String template(Path chart, String valuesYaml) {
    return template(chart, valuesYaml, KUBE_VERSION);
  }

  /** {@link #template(Path, String)} for a given Kubernetes version (.Capabilities.KubeVersion). */
  public static String template(Path chart, String valuesYaml, String kubeVersion) {
    return template(chart, RELEASE, valuesYaml, kubeVersion);
  }

  private static String template(
      Path chart, String release, String valuesYaml, String kubeVersion) {
    try {
      Path values = Files.createTempFile("kvguard-values", ".yaml");
      try {
        Files.writeString(values, valuesYaml == null ? "" : valuesYaml, StandardCharsets.UTF_8);
        TemplateCommand template =
            new Helm(chart)
                .template()
                .withName(release)
                .withNamespace(NAMESPACE)
                .withKubeVersion(kubeVersion)
                .withValuesFile(values);
        return template.call();
      } finally {
        Files.deleteIfExists(values);
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * Renders hook resources too. helm-java returns only the release manifest, without hooks; so this
   * renders a copy of the chart whose hook annotations carry {@link #HOOK_PREFIX} instead of {@code
   * helm.sh/hook} (Helm then treats them as plain resources) and nothing else changed.
   */
  public static RenderedChart renderWithHooks(String valuesYaml) {
    return renderWithHooks(RELEASE, valuesYaml);
  }

  /** {@link #renderWithHooks(String)} as release {@code release}. */
  public static RenderedChart renderWithHooks(String release, String valuesYaml) {
    Path copy = null;
    try {
      copy = Files.createTempDirectory("kvguard-chart");
      Path target = copy.resolve("kvguard");
      try (Stream<Path> files = Files.walk(CHART)) {
        for (Path source : files.toList()) {
          Path dest = target.resolve(CHART.relativize(source).toString());
          if (Files.isDirectory(source)) {
            Files.createDirectories(dest);
          } else if (source.startsWith(CHART.resolve("templates"))) {
            Files.writeString(dest, Files.readString(source).replace("helm.sh/hook", HOOK_PREFIX));
          } else {
            Files.copy(source, dest);
          }
        }
      }
      return parse(template(target, release, valuesYaml, KUBE_VERSION));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } finally {
      deleteTree(copy);
    }
  }

  /**
   * Stands for {@code helm.sh/hook} in {@link #renderWithHooks}: {@code <prefix>}, {@code
   * <prefix>-weight}, ...
   */
  public static final String HOOK_PREFIX = "test.kvguard.io/hook";

  /** The object's Helm hook annotations, under their real names ({@code helm.sh/hook...}). */
  public static java.util.Map<String, String> hookAnnotations(HasMetadata object) {
    java.util.Map<String, String> hooks = new java.util.TreeMap<>();
    java.util.Map<String, String> annotations = object.getMetadata().getAnnotations();
    if (annotations != null) {
      annotations.forEach(
          (key, value) -> {
            if (key.startsWith(HOOK_PREFIX)) {
              hooks.put("helm.sh/hook" + key.substring(HOOK_PREFIX.length()), value);
            }
          });
    }
    return hooks;
  }

  private static void deleteTree(Path root) {
    if (root == null) {
      return;
    }
    try (Stream<Path> files = Files.walk(root)) {
      for (Path path : files.sorted(java.util.Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(path);
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  public static RenderedChart parse(String manifests) {
    List<HasMetadata> parsed = new ArrayList<>();
    try (MappingIterator<JsonNode> docs = YAML.readerFor(JsonNode.class).readValues(manifests)) {
      while (docs.hasNext()) {
        JsonNode doc = docs.next();
        if (doc == null || doc.isNull() || doc.isEmpty()) {
          continue;
        }
        parsed.add(SERIALIZATION.unmarshal(SERIALIZATION.asJson(doc), HasMetadata.class));
      }
    } catch (IOException e) {
      throw new UncheckedIOException("the chart rendered invalid YAML", e);
    }
    return new RenderedChart(parsed);
  }

  public List<HasMetadata> all() {
    return objects;
  }

  public <T extends HasMetadata> List<T> all(Class<T> type) {
    return objects.stream().filter(type::isInstance).map(type::cast).toList();
  }

  /**
   * Objects of a kind as generic resources (for kinds fabric8 has no class for, e.g.
   * ServiceMonitor).
   */
  public List<HasMetadata> kind(String kind) {
    return objects.stream().filter(o -> kind.equals(o.getKind())).toList();
  }

  /** The object of a kind (generic, as {@link #kind(String)}) with the given name. */
  public HasMetadata kindNamed(String kind, String name) {
    return kind(kind).stream()
        .filter(o -> Objects.equals(name, o.getMetadata().getName()))
        .findFirst()
        .orElseThrow(() -> new AssertionError("no " + kind + " named " + name + " was rendered"));
  }

  public <T extends HasMetadata> T one(Class<T> type) {
    List<T> found = all(type);
    if (found.size() != 1) {
      throw new AssertionError(
          "expected exactly one " + type.getSimpleName() + ", rendered " + found.size());
    }
    return found.get(0);
  }

  public <T extends HasMetadata> T named(Class<T> type, String name) {
    return all(type).stream()
        .filter(o -> Objects.equals(name, o.getMetadata().getName()))
        .findFirst()
        .orElseThrow(
            () ->
                new AssertionError(
                    "no " + type.getSimpleName() + " named " + name + " was rendered"));
  }

  public Stream<String> kinds() {
    return objects.stream().map(HasMetadata::getKind);
  }

  /** The object as a tree, for fields of kinds fabric8 does not model. */
  public static JsonNode tree(HasMetadata object) {
    return YAML.valueToTree(SERIALIZATION.convertValue(object, java.util.Map.class));
  }
}
