// Make the build independent of the folder it runs in.
//
// The federation container's module id is a hash of its identifier, and the
// identifier holds the absolute paths of the exposed modules, so each
// checkout numbered it differently and remoteEntry.<hash>.js changed name
// (with package.json's pointer to it). Name that one module by its
// path-free libIdent before webpack numbers the rest; every other module
// keeps its deterministic id.
class PathFreeContainerId {
  apply(compiler) {
    compiler.hooks.compilation.tap('PathFreeContainerId', compilation => {
      compilation.hooks.beforeModuleIds.tap('PathFreeContainerId', modules => {
        const { chunkGraph } = compilation;
        for (const module of modules) {
          if (
            module.constructor.name === 'ContainerEntryModule' &&
            chunkGraph.getModuleId(module) === null
          ) {
            chunkGraph.setModuleId(
              module,
              module.libIdent({ context: compiler.context })
            );
          }
        }
      });
    });
  }
}

module.exports = { plugins: [new PathFreeContainerId()] };
