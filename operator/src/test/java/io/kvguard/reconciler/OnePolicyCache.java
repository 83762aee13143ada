package io.kvguard.reconciler;

import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.javaoperatorsdk.operator.processing.event.source.IndexerResourceCache;
import io.kvguard.customresource.ModelDeployment;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.stream.Stream;

/** The policies' cache holding one policy (the informer's, as a pass reads it). */
final class OnePolicyCache implements IndexerResourceCache<ModelDeployment> {
  private final ModelDeployment md;

  OnePolicyCache(ModelDeployment md) {
    this.md = md;
  }

  @Override
  public void addIndexers(Map<String, Function<ModelDeployment, List<String>>> indexers) {}

  @Override
  public List<ModelDeployment> byIndex(String index, String key) {
    return List.of();
  }

  @Override
  public Optional<ModelDeployment> get(ResourceID id) {
    return id.equals(ResourceID.fromResource(md)) ? Optional.of(md) : Optional.empty();
  }

  @Override
  public Stream<ResourceID> keys() {
    return Stream.of(ResourceID.fromResource(md));
  }

  @Override
  public Stream<ModelDeployment> list(Predicate<ModelDeployment> predicate) {
    return Stream.of(md).filter(predicate);
  }

  @Override
  public Stream<ModelDeployment> list(String namespace, Predicate<ModelDeployment> predicate) {
    return list(m -> namespace.equals(m.getMetadata().getNamespace()) && predicate.test(m));
  }
}
