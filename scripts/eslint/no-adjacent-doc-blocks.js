/**
 * An ESLint rule: a doc comment (`/** … *\/`) directly followed by another one. The first is orphaned (an edit
 * put a declaration's comment above another comment, or left an old one behind): no tool shows it, and the reader
 * cannot tell which comment belongs to the code below.
 */
export default {
  meta: {
    type: 'problem',
    docs: { description: 'disallow a doc comment directly followed by another doc comment' },
    messages: { adjacent: 'This doc comment is directly followed by another one: merge them or remove the orphan.' },
    schema: [],
  },
  create(context) {
    const source = context.sourceCode;
    const isDoc = (comment) => comment.type === 'Block' && comment.value.startsWith('*');
    // JSDoc type declarations stand alone, one after another, and belong to no code below.
    const declaresType = (comment) => /@(typedef|callback|import)\b/.test(comment.value);
    // A section's comment followed by the type of the line below (`/** @type {…} *\/`) is no orphan either.
    const typesNextLine = (comment) => /^\*\s*@(type|typedef|template)\b/.test(comment.value);
    return {
      Program() {
        const comments = source.getAllComments();
        for (let i = 0; i + 1 < comments.length; i++) {
          const [first, next] = [comments[i], comments[i + 1]];
          const between = source.text.slice(first.range[1], next.range[0]);
          // On the next line: a blank line between sets a file's or section's comment apart, which is fine.
          const adjacent = between.trim() === '' && between.split('\n').length <= 2;
          if (isDoc(first) && isDoc(next) && adjacent && !declaresType(first) && !typesNextLine(next))
            context.report({ loc: first.loc, messageId: 'adjacent' });
        }
      },
    };
  },
};
