import { GraphQLError, Kind, type ASTNode, type FragmentDefinitionNode, type ValidationRule } from 'graphql';

/**
 * `__schema` and `__type`: schema introspection, answered from the schema in memory. graphql-js's own
 * MaxIntrospectionDepthRule (one of the specified rules every request is validated with) refuses the
 * introspection queries that would grow without bound (`fields { type { fields … } }`), so the depth
 * and cost limits leave these fields out and the standard query of GraphiQL and code generators
 * (`getIntrospectionQuery()`, 15 levels) is accepted.
 */
export const isIntrospectionField = (name: string): boolean => name === '__schema' || name === '__type';

/**
 * How deep an operation nests: a field is a level, an inline fragment too (`... on Me { … }` can be
 * repeated without end), a fragment spread is replaced by its fragment. Introspection fields count 0.
 */
function depthOf(node: ASTNode, fragments: Map<string, FragmentDefinitionNode>, visiting: Set<string>): number {
  if (node.kind === Kind.FRAGMENT_SPREAD) {
    const fragment = fragments.get(node.name.value);
    if (!fragment || visiting.has(fragment.name.value)) return 0; // unknown or cyclic: validation refuses it
    visiting.add(fragment.name.value);
    const depth = depthOf(fragment, fragments, visiting);
    visiting.delete(fragment.name.value);
    return depth;
  }
  if (node.kind === Kind.FIELD && isIntrospectionField(node.name.value)) return 0;
  const own = node.kind === Kind.FIELD || node.kind === Kind.INLINE_FRAGMENT ? 1 : 0;
  const selections = 'selectionSet' in node && node.selectionSet ? node.selectionSet.selections : [];
  return own + Math.max(0, ...selections.map((selection) => depthOf(selection, fragments, visiting)));
}

/** A validation rule: an operation nesting deeper than `max` is refused with graphql.too_deep. */
export const depthLimit =
  (max: number): ValidationRule =>
  (context) => ({
    Document(document) {
      const fragments = new Map<string, FragmentDefinitionNode>();
      for (const definition of document.definitions)
        if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
      for (const definition of document.definitions) {
        if (definition.kind !== Kind.OPERATION_DEFINITION || depthOf(definition, fragments, new Set()) <= max) continue;
        context.reportError(
          new GraphQLError(`Query nests deeper than ${max} levels`, {
            extensions: { code: 'graphql.too_deep', status: 400 },
          }),
        );
        return;
      }
    },
  });
