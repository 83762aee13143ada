package io.kvguard.demo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.kvguard.customresource.ModelDeployment;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The demo as an evaluator runs it: the incident's refusal with its numbers, then the fix, then
 * exit 0.
 */
class DemoIT {

  /** Output written by another thread, readable while the demo runs. */
  private static final class Capture {
    private final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    final PrintStream stream = new PrintStream(bytes, true, StandardCharsets.UTF_8);

    String text() {
      synchronized (bytes) {
        return bytes.toString(StandardCharsets.UTF_8);
      }
    }
  }

  @Test
  void replaysTheIncidentRefusesThePrefillPoolsThenOpensTheGatesAfterTheFix() {
    Capture out = new Capture();

    int exit = new Demo(false, Demo.DEFAULT_TIMEOUT).run(out.stream);

    String text = out.text();
    assertThat(exit).as(text).isZero();
    assertThat(text).doesNotContain("FAILED");
    int refusal = text.indexOf("pod/glm-prefill-0  kvguard.io/pool-verified=False  PoolTooSmall");
    // One PoolTooSmall Event for the policy: the prefill pods refused in one pass share a write ("2
    // pods turned PoolTooSmall: glm-prefill-0 (role prefill): ..."); the demo itself waits until it
    // counts both.
    Matcher refusalLine =
        Pattern.compile(
                "Warning PoolTooSmall(?: \\(x\\d+\\))?  .*glm-prefill-[01] \\(role prefill\\): "
                    + "KV pool 681280 tokens < context window 1048576 × 1\\.0")
            .matcher(text);
    int refusalEvent = refusalLine.find() ? refusalLine.start() : -1;
    int notReady = text.indexOf("mdep/glm  verified 2/4, Ready=False");
    int fix = text.indexOf("== 2. The fix");
    int reopened =
        text.indexOf(
            "pod/glm-prefill-0  kvguard.io/pool-verified=True  PoolSufficient, kvguard.io/verified=true"
                + "  KV pool 2040000 tokens >= context window 1048576");
    int ready = text.indexOf("mdep/glm  verified 4/4, Ready=True");
    assertThat(List.of(refusal, refusalEvent, notReady, fix, reopened, ready))
        .as(text)
        .doesNotContain(-1);
    assertThat(refusal).isLessThan(fix);
    assertThat(notReady).isLessThan(fix);
    assertThat(fix).isLessThan(reopened);
    assertThat(reopened).isLessThan(ready);
    // The kubectl-style tables after each phase, with the printer columns of the generated CRD.
    assertThat(text)
        .containsPattern("glm +zai-org/GLM-5.3 +1048576 +2/4 +False +\\d+s")
        .containsPattern("glm +zai-org/GLM-5.3 +1048576 +4/4 +True +\\d+s")
        .containsPattern("glm-prefill-1 +0 +False +PoolTooSmall +KV pool 681280 tokens")
        .containsPattern("glm-prefill-1 +1 +True +PoolSufficient +true +KV pool 2040000 tokens")
        .containsPattern("Ready +True +MinReadyPodsVerified")
        // The version does not clear the prefill/decode path: the demo says why its team accepts
        // it.
        .contains("engineAdvisories: Disabled", "only the incident's", "--pd-router");
  }

  @Test
  void keepRunningServesKubectlThroughAKubeconfigUntilStopped() throws Exception {
    Capture out = new Capture();
    Demo demo = new Demo(true, Demo.DEFAULT_TIMEOUT);
    CompletableFuture<Integer> running = CompletableFuture.supplyAsync(() -> demo.run(out.stream));
    Pattern exported = Pattern.compile("export KUBECONFIG=(\\S+)");
    await()
        .atMost(Duration.ofSeconds(90))
        .until(() -> exported.matcher(out.text()).find() || running.isDone());
    Matcher kubeconfigLine = exported.matcher(out.text());
    assertThat(kubeconfigLine.find()).as(out.text()).isTrue();
    Path kubeconfig = Path.of(kubeconfigLine.group(1));

    try (KubernetesClient client =
        new KubernetesClientBuilder()
            .withConfig(Config.fromKubeconfig(Files.readString(kubeconfig)))
            .build()) {
      ModelDeployment md =
          client.resources(ModelDeployment.class).inNamespace("inference").withName("glm").get();
      assertThat(md.getStatus().verified).isEqualTo("4/4");

      JsonNode table =
          kubectlTable(
              client.getMasterUrl()
                  + "apis/kvguard.io/v1alpha1/namespaces/inference/modeldeployments");
      List<String> columns = new ArrayList<>();
      table.get("columnDefinitions").forEach(c -> columns.add(c.get("name").asText()));
      // LabelOnly: pods only the routing label holds back (issue 18 §1); none here, every demo pod
      // declares the gate.
      assertThat(columns)
          .containsExactly("Name", "Model", "Window", "Verified", "Ready", "LabelOnly", "Age");
      List<String> cells = new ArrayList<>();
      table.get("rows").get(0).get("cells").forEach(c -> cells.add(c.asText()));
      assertThat(cells.subList(0, 5))
          .containsExactly("glm", "zai-org/GLM-5.3", "1048576", "4/4", "True");

      // What `kubectl patch mdep glm --type merge -p '{"spec":{"minPoolRatio":3}}'` does: the
      // prefill gates close.
      client
          .resources(ModelDeployment.class)
          .inNamespace("inference")
          .withName("glm")
          .patch(PatchContext.of(PatchType.JSON_MERGE), "{\"spec\":{\"minPoolRatio\":3}}");
      await()
          .atMost(Duration.ofSeconds(30))
          .untilAsserted(
              () ->
                  assertThat(out.text())
                      .contains(
                          "pod/glm-prefill-0  kvguard.io/pool-verified=False  PoolTooSmall, no kvguard.io/verified"
                              + "  KV pool 2040000 tokens < context window 1048576 × 3.0"));
    }

    demo.stopAndWait();
    assertThat(running.get()).isZero();
    assertThat(kubeconfig).doesNotExist();
  }

  private static JsonNode kubectlTable(String url) throws Exception {
    HttpRequest request =
        HttpRequest.newBuilder(URI.create(url))
            .header("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io,application/json")
            .GET()
            .build();
    HttpResponse<String> response =
        HttpClient.newHttpClient().send(request, HttpResponse.BodyHandlers.ofString());
    assertThat(response.statusCode()).isEqualTo(200);
    JsonNode table = new ObjectMapper().readTree(response.body());
    assertThat(table.get("kind").asText()).isEqualTo("Table");
    return table;
  }
}
