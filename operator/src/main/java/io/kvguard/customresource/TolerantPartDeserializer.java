package io.kvguard.customresource;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.databind.DatabindException;
import com.fasterxml.jackson.databind.DeserializationContext;
import com.fasterxml.jackson.databind.JsonDeserializer;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.util.function.Function;

/**
 * Reads the spec or the status of a ModelDeployment without ever failing: a part kvguard's classes
 * cannot hold becomes a stand-in carrying only the {@link Unreadable} failure. Without this, one
 * out-of-range number in any watched namespace made the informer throw, and JOSDK stopped the
 * operator for every tenant (issue 29). The JSON itself is still read strictly: only the conversion
 * into the part's class is caught.
 */
abstract class TolerantPartDeserializer<T> extends JsonDeserializer<T> {
  private final String part;
  private final Class<T> type;
  private final Function<Unreadable, T> standIn;

  TolerantPartDeserializer(String part, Class<T> type, Function<Unreadable, T> standIn) {
    this.part = part;
    this.type = type;
    this.standIn = standIn;
  }

  @Override
  public T deserialize(JsonParser parser, DeserializationContext context) throws IOException {
    JsonNode tree = context.readTree(parser);
    try {
      return context.readTreeAsValue(tree, type);
    } catch (DatabindException e) {
      return standIn.apply(new Unreadable(path(e), problem(e), tree));
    } catch (IOException | RuntimeException e) {
      return standIn.apply(new Unreadable(part, e.getMessage(), tree));
    }
  }

  /** The failing field as a path from the object's root: spec.roles[0].minReadyPods. */
  private String path(DatabindException e) {
    StringBuilder path = new StringBuilder(part);
    if (e instanceof JsonMappingException mapping) {
      for (JsonMappingException.Reference step : mapping.getPath()) {
        if (step.getFieldName() != null) {
          path.append('.').append(step.getFieldName());
        } else if (step.getIndex() >= 0) {
          path.append('[').append(step.getIndex()).append(']');
        }
      }
    }
    return path.toString();
  }

  /** Jackson's message without its location and reference chain, which name Java classes. */
  private static String problem(DatabindException e) {
    String message = e.getOriginalMessage();
    return message == null ? e.getClass().getSimpleName() : message.lines().findFirst().orElse("");
  }

  static final class Spec extends TolerantPartDeserializer<ModelDeploymentSpec> {
    Spec() {
      super("spec", ModelDeploymentSpec.class, ModelDeploymentSpec::standIn);
    }
  }

  static final class Status extends TolerantPartDeserializer<ModelDeploymentStatus> {
    Status() {
      super("status", ModelDeploymentStatus.class, ModelDeploymentStatus::standIn);
    }
  }
}
