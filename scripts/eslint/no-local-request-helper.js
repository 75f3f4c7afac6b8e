/**
 * An ESLint rule for test files: no request helper of their own. The HTTP tests send requests through the one typed
 * client of test/client.ts (`t.as(token).get(...)`), which checks paths, bodies and answers against the API
 * document; a local helper (a named function, or a const holding one, whose body calls `.inject(`) bypasses that
 * and returns untyped bodies. An inline `app.inject(...)` in a test (an HTML page, a form post) is not a helper.
 */
export default {
  meta: {
    type: 'problem',
    docs: { description: 'disallow request helpers of a test file’s own; use the typed client of test/client.ts' },
    messages: {
      helper: "'{{name}}' sends requests with .inject(): use the typed client of test/client.ts (t.as(token)).",
    },
    schema: [],
  },
  create(context) {
    /** The name of a function node: declared, or held by a const. */
    const nameOf = (node) => {
      if (node.type === 'FunctionDeclaration') return node.id?.name;
      if (node.parent?.type === 'VariableDeclarator' && node.parent.id.type === 'Identifier')
        return node.parent.id.name;
      return undefined;
    };
    const reported = new Set();
    return {
      'CallExpression[callee.type="MemberExpression"][callee.property.name="inject"]'(node) {
        const functions = context.sourceCode
          .getAncestors(node)
          .filter((ancestor) =>
            /^(FunctionDeclaration|FunctionExpression|ArrowFunctionExpression)$/.test(ancestor.type),
          );
        const helper = functions.reverse().find((fn) => nameOf(fn) !== undefined);
        if (!helper || reported.has(helper)) return;
        reported.add(helper);
        context.report({ node: helper, messageId: 'helper', data: { name: nameOf(helper) } });
      },
    };
  },
};
