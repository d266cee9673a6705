"""The articles' fifteen examples as written (tfbench/scenarios/articles.py)."""

from tfbench.scenarios import articles, variants

from . import common

EXAMPLES = [variants(articles.EXAMPLES)]


class Articles(common.StepBenchmark):
    family, params, param_names = "article", EXAMPLES, ["variant"]
    version = common.version(articles)


class ArticlesCosts(common.ProbeCosts, common.GraphOps, common.Traces):
    family, params, param_names = "article", EXAMPLES, ["variant"]
    version = common.version(articles)

    def setup_cache(self):
        return self.measure()

    setup_cache.timeout = 1800

    track_graph_ops_per_call = common.track("track_graph_ops_per_call")
