package io.kvguard.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.ListOptionsBuilder;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodList;
import io.fabric8.kubernetes.client.NamespacedKubernetesClient;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A paged LIST on the embedded API server answers as a real one does (ListPages): pages in key
 * order, and later pages from the first page's snapshot, not from the store as it is by then.
 */
class ListPagesTest {
  private final EmbeddedApiServer api = new EmbeddedApiServer();
  private final NamespacedKubernetesClient client = api.client();

  @AfterEach
  void stop() {
    client.close();
    api.close();
  }

  private void pod(String name) {
    client
        .pods()
        .inNamespace("tenant")
        .resource(
            new PodBuilder()
                .withNewMetadata()
                .withName(name)
                .withNamespace("tenant")
                .endMetadata()
                .build())
        .create();
  }

  private PodList page(String token) {
    return client
        .pods()
        .inNamespace("tenant")
        .list(new ListOptionsBuilder().withLimit(2L).withContinue(token).build());
  }

  private static List<String> names(PodList list) {
    return list.getItems().stream().map(p -> p.getMetadata().getName()).toList();
  }

  @Test
  void laterPagesAreCutFromTheFirstPagesSnapshotInKeyOrder() {
    client
        .namespaces()
        .resource(new NamespaceBuilder().withNewMetadata().withName("tenant").endMetadata().build())
        .create();
    for (String name : List.of("e", "b", "d", "a", "c")) {
      pod(name);
    }

    PodList first = page(null);
    // Created and deleted after the first page: a real server's later pages read the store at the
    // first page's resourceVersion (apiserver etcd3 store.go GetList), so neither shows.
    pod("bb");
    client.pods().inNamespace("tenant").withName("e").delete();
    api.clearRequests();
    List<String> seen = new ArrayList<>(names(first));
    String token = first.getMetadata().getContinue();
    while (token != null && !token.isEmpty()) {
      PodList next = page(token);
      seen.addAll(names(next));
      token = next.getMetadata().getContinue();
    }

    assertThat(names(first)).containsExactly("a", "b");
    assertThat(first.getMetadata().getRemainingItemCount()).isEqualTo(3L);
    assertThat(seen).containsExactly("a", "b", "c", "d", "e");
    assertThat(api.requests()).hasSize(2);
  }

  @Test
  void aTokenWithoutItsSnapshotIsCutFromTheStoreAsItIsNow() {
    for (String name : List.of("a", "b", "c")) {
      pod(name);
    }
    PodList first = page(null);
    String token = first.getMetadata().getContinue();
    // A second LIST of the same query from the start hands out the same token and replaces the
    // snapshot; once that one is read, the first token has none left.
    page(null);
    assertThat(names(page(token))).containsExactly("c");
    pod("d");

    List<Pod> again = page(token).getItems();

    assertThat(again).extracting(p -> p.getMetadata().getName()).containsExactly("c", "d");
  }
}
