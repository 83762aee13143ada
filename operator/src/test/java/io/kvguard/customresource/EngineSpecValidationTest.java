package io.kvguard.customresource;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import dev.cel.bundle.Cel;
import dev.cel.bundle.CelFactory;
import dev.cel.common.types.SimpleType;
import dev.cel.parser.CelStandardMacro;
import io.kvguard.verdict.EngineVersion;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The engine settings' validation as the API server applies it: the CEL rules and patterns of the
 * generated CRD, evaluated on sample specs (the mock API server validates nothing).
 */
class EngineSpecValidationTest {
  private static final Cel CEL =
      CelFactory.standardCelBuilder()
          .setStandardMacros(CelStandardMacro.STANDARD_MACROS)
          .addVar("self", SimpleType.DYN)
          .build();
  private static JsonNode role;

  @BeforeAll
  static void loadCrd() throws Exception {
    JsonNode crd =
        new ObjectMapper(new YAMLFactory())
            .readTree(
                Path.of("target/classes/META-INF/fabric8/modeldeployments.kvguard.io-v1.yml")
                    .toFile());
    role = crd.at("/spec/versions/0/schema/openAPIV3Schema/properties/spec/properties/roles/items");
  }

  /** True when every x-kubernetes-validations rule of {@code schema} accepts {@code self}. */
  private static boolean rulesAccept(JsonNode schema, Map<String, Object> self) throws Exception {
    JsonNode rules = schema.get("x-kubernetes-validations");
    assertThat(rules).as("schema carries CEL rules").isNotNull();
    for (JsonNode rule : rules) {
      Object result =
          CEL.createProgram(CEL.compile(rule.get("rule").asText()).getAst())
              .eval(Map.of("self", self));
      if (!Boolean.TRUE.equals(result)) {
        return false;
      }
    }
    return true;
  }

  private static boolean matches(JsonNode schema, String value) {
    return Pattern.compile(schema.get("pattern").asText()).matcher(value).find();
  }

  private static Map<String, Object> role(String engine, boolean withGeneric) {
    Map<String, Object> spec =
        new HashMap<>(
            Map.of(
                "name",
                "serve",
                "engine",
                engine,
                "port",
                8000L,
                "selector",
                Map.of("matchLabels", Map.of("app", "m"))));
    if (withGeneric) {
      spec.put("generic", Map.of("path", "/stats", "pool", Map.of("jsonPointer", "/kv")));
    }
    return spec;
  }

  @Test
  void genericSettingsAreRequiredForTheGenericEngineAndOnlyThere() throws Exception {
    assertThat(rulesAccept(role, role("generic", true))).isTrue();
    assertThat(rulesAccept(role, role("generic", false))).isFalse();
    assertThat(rulesAccept(role, role("sglang", true))).isFalse();
    assertThat(rulesAccept(role, role("ollama", false))).isTrue();
    assertThat(role.at("/properties/engine/enum"))
        .extracting(JsonNode::asText)
        .containsExactlyInAnyOrder(
            "sglang", "vllm", "tgi", "trtllm", "llamacpp", "ollama", "generic");
  }

  @Test
  void aValueSourceNamesExactlyOneOfJsonPointerOrMetric() throws Exception {
    for (String figure : List.of("pool", "engineContext")) {
      JsonNode source = role.at("/properties/generic/properties/" + figure);
      assertThat(rulesAccept(source, Map.of("jsonPointer", "/kv/tokens"))).isTrue();
      assertThat(rulesAccept(source, Map.of("metric", "kv_tokens", "labels", Map.of("rank", "0"))))
          .isTrue();
      assertThat(rulesAccept(source, Map.of("jsonPointer", "/kv", "metric", "kv_tokens")))
          .isFalse();
      assertThat(rulesAccept(source, Map.of("multiplier", 16L))).isFalse();
      assertThat(rulesAccept(source, Map.of("jsonPointer", "/kv", "labels", Map.of("rank", "0"))))
          .isFalse();
      assertThat(source.at("/properties/multiplier/minimum").asDouble()).isEqualTo(1.0);
    }
    assertThat(role.at("/properties/generic/required"))
        .extracting(JsonNode::asText)
        .containsExactly("path", "pool");
  }

  @ParameterizedTest
  @ValueSource(strings = {"/metrics", "/", "/v1/stats?format=json", "/api/ps"})
  void pathsOnTheEngineAreAccepted(String path) {
    assertThat(matches(role.at("/properties/generic/properties/path"), path)).isTrue();
    assertThat(matches(role.at("/properties/generic/properties/pool/properties/path"), path))
        .isTrue();
  }

  @ParameterizedTest
  @ValueSource(strings = {"//169.254.169.254/latest", "metrics", "/a b", "http://x/metrics", ""})
  void pathsThatLeaveTheEngineAreRejected(String path) {
    assertThat(matches(role.at("/properties/generic/properties/path"), path)).isFalse();
  }

  @Test
  void jsonPointersMustBeRfc6901() {
    JsonNode pointer = role.at("/properties/generic/properties/pool/properties/jsonPointer");
    assertThat(List.of("/kv/capacity", "/internal_states/0/token_capacity", "/a~1b", "/~0x"))
        .allMatch(p -> matches(pointer, p));
    assertThat(List.of("kv", "", "/a~2", "/~")).noneMatch(p -> matches(pointer, p));
  }

  @ParameterizedTest
  @ValueSource(strings = {"0.5.22", "v0.5.22", "2.3.1", "0.6.4.post1", "1"})
  void minEngineVersionAcceptsReleaseVersionsTheJudgeCanCompare(String version) {
    assertThat(matches(role.at("/properties/minEngineVersion"), version)).isTrue();
    assertThat(EngineVersion.parse(version).isRelease()).isTrue();
  }

  @ParameterizedTest
  @ValueSource(strings = {"0.0.0.dev1+gbb737d7a8", "b4567-abc", "latest", "0.5.22rc1", ">=0.5.22"})
  void minEngineVersionRejectsWhatIsNotARelease(String version) {
    assertThat(matches(role.at("/properties/minEngineVersion"), version)).isFalse();
  }

  @Test
  void advisoriesAreOnByDefault() throws Exception {
    JsonNode advisories =
        new ObjectMapper(new YAMLFactory())
            .readTree(
                Path.of("target/classes/META-INF/fabric8/modeldeployments.kvguard.io-v1.yml")
                    .toFile())
            .at(
                "/spec/versions/0/schema/openAPIV3Schema/properties/spec/properties/engineAdvisories");
    assertThat(advisories.get("default").asText()).isEqualTo("Enabled");
    assertThat(advisories.get("enum"))
        .extracting(JsonNode::asText)
        .containsExactlyInAnyOrder("Enabled", "Disabled");
    assertThat(new ModelDeploymentSpec().effectiveEngineAdvisories()).isTrue();
  }
}
