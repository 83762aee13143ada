package io.kvguard.testing;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.ListOptionsBuilder;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodList;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kvguard.testkit.EmbeddedApiServer;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The embedded API server pages a LIST that asks for a limit, as a real one does: kvguard's pod
 * informers list 500 pods at a time, and a server that answered every pod at once (fabric8's mock
 * does) made the benchmarks measure a page of a whole namespace.
 */
class EmbeddedApiServerPagesTest {
  private EmbeddedApiServer api;
  private KubernetesClient client;

  @BeforeEach
  void start() {
    api = new EmbeddedApiServer();
    client = api.client();
    for (String namespace : List.of("serving", "batch")) {
      client
          .namespaces()
          .resource(
              new NamespaceBuilder().withNewMetadata().withName(namespace).endMetadata().build())
          .create();
    }
    IntStream.range(0, 1203)
        .forEach(i -> create("serving", String.format("engine-%04d", 1202 - i)));
    IntStream.range(0, 7).forEach(i -> create("batch", "job-" + i));
  }

  @AfterEach
  void stop() {
    client.close();
    api.close();
  }

  private void create(String namespace, String name) {
    client
        .pods()
        .inNamespace(namespace)
        .resource(
            new PodBuilder()
                .withNewMetadata()
                .withName(name)
                .endMetadata()
                .withNewSpec()
                .addNewContainer()
                .withName("engine")
                .withImage("engine")
                .endContainer()
                .endSpec()
                .build())
        .create();
  }

  @Test
  void aLimitedListComesInPagesInNameOrderUntilNoContinueIsLeft() {
    List<String> names = new ArrayList<>();
    List<Integer> pageSizes = new ArrayList<>();
    String next = null;
    do {
      PodList page =
          client
              .pods()
              .inNamespace("serving")
              .list(new ListOptionsBuilder().withLimit(500L).withContinue(next).build());
      pageSizes.add(page.getItems().size());
      page.getItems().forEach(pod -> names.add(pod.getMetadata().getName()));
      next = page.getMetadata().getContinue();
    } while (next != null && !next.isEmpty());

    assertThat(pageSizes).containsExactly(500, 500, 203);
    assertThat(names).hasSize(1203).doesNotHaveDuplicates().isSorted();
  }

  private PodList batchPage(String token) {
    return client
        .pods()
        .inNamespace("batch")
        .list(new ListOptionsBuilder().withLimit(3L).withContinue(token).build());
  }

  private static List<String> names(PodList page) {
    return page.getItems().stream().map(pod -> pod.getMetadata().getName()).toList();
  }

  @Test
  void laterPagesComeFromTheFirstPagesSnapshot() {
    PodList first = batchPage(null);
    // Created and deleted after the first page: a real server reads later pages at the first
    // page's resourceVersion (apiserver etcd3 store.go GetList), so neither change shows in them.
    create("batch", "job-35");
    client.pods().inNamespace("batch").withName("job-6").delete();
    api.clearRequests();
    List<String> names = new ArrayList<>(names(first));
    String next = first.getMetadata().getContinue();
    while (next != null && !next.isEmpty()) {
      PodList page = batchPage(next);
      names.addAll(names(page));
      next = page.getMetadata().getContinue();
    }

    assertThat(first.getMetadata().getRemainingItemCount()).isEqualTo(4L);
    assertThat(names)
        .containsExactly("job-0", "job-1", "job-2", "job-3", "job-4", "job-5", "job-6");
    assertThat(api.requests()).hasSize(2);
  }

  @Test
  void aTokenWhoseSnapshotWasReadIsCutFromTheStoreAsItIsNow() {
    String token = batchPage(null).getMetadata().getContinue();
    assertThat(names(batchPage(token))).containsExactly("job-3", "job-4", "job-5");
    create("batch", "job-35");

    assertThat(names(batchPage(token))).containsExactly("job-3", "job-35", "job-4");
  }

  @Test
  void aListWithoutALimitIsWholeAndTheOtherNamespaceIsNotInIt() {
    List<Pod> pods = client.pods().inNamespace("serving").list().getItems();
    assertThat(pods).hasSize(1203);
    assertThat(
            client
                .pods()
                .inNamespace("batch")
                .list(new ListOptionsBuilder().withLimit(500L).build())
                .getItems())
        .hasSize(7);
  }
}
