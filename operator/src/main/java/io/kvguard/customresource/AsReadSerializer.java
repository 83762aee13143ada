package io.kvguard.customresource;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.JavaType;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.JsonSerializer;
import com.fasterxml.jackson.databind.SerializerProvider;
import com.fasterxml.jackson.databind.jsonFormatVisitors.JsonFormatVisitorWrapper;
import java.io.IOException;
import java.util.Optional;
import java.util.function.Function;

/**
 * Writes the spec or the status as kvguard read it: an unreadable part exactly as it was stored,
 * any other as usual. Every write of kvguard's to a ModelDeployment (the finalizer, the status) is
 * a patch computed from the object serialized before and after the change, and the copies JOSDK
 * caches are made the same way: an unreadable part must come out as it went in, or the patch would
 * overwrite the stored spec with an empty one.
 */
abstract class AsReadSerializer<T> extends JsonSerializer<T> {
  private final Class<T> type;
  private final Function<T, Optional<Unreadable>> unreadable;

  AsReadSerializer(Class<T> type, Function<T, Optional<Unreadable>> unreadable) {
    this.type = type;
    this.unreadable = unreadable;
  }

  @Override
  public void serialize(T value, JsonGenerator generator, SerializerProvider provider)
      throws IOException {
    Optional<Unreadable> failed = unreadable.apply(value);
    if (failed.isPresent()) {
      generator.writeTree(failed.get().original());
    } else {
      provider.findValueSerializer(type).serialize(value, generator, provider);
    }
  }

  /** Whoever derives a schema from the class (the CRD generator) sees the class's own. */
  @Override
  public void acceptJsonFormatVisitor(JsonFormatVisitorWrapper visitor, JavaType hint)
      throws JsonMappingException {
    visitor.getProvider().findValueSerializer(type).acceptJsonFormatVisitor(visitor, hint);
  }

  static final class Spec extends AsReadSerializer<ModelDeploymentSpec> {
    Spec() {
      super(ModelDeploymentSpec.class, ModelDeploymentSpec::unreadable);
    }
  }

  static final class Status extends AsReadSerializer<ModelDeploymentStatus> {
    Status() {
      super(ModelDeploymentStatus.class, ModelDeploymentStatus::unreadable);
    }
  }
}
