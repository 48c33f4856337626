-- LightningCAS: neurovarieties of lightning self-attention networks, for Macaulay2 1.21.
-- Load without installing:
--   loadPackage("LightningCAS", FileName => "/path/to/m2/LightningCAS.m2")
-- The lightning_cas Python package calls these functions and reads their records as JSON.
newPackage("LightningCAS",
    Version => "0.2.0",
    Date => "December 2, 2026",
    Headline => "neurovarieties of lightning self-attention networks",
    Authors => {{Name => "the lightning_cas project"}},
    Keywords => {"Applied Algebraic Geometry"},
    PackageImports => {"JSON", "MinimalPrimes", "Elimination", "TangentCone"},
    AuxiliaryFiles => true,
    DebuggingMode => false)

export {
    -- types
    "NeuralNetwork",
    "NetworkBlock",
    "ImplicitModel",
    "NeurovarietyResult",
    -- the network
    "neuralNetwork",
    "attentionBlock",
    "mlpBlock",
    "linearBlock",
    "powerBlock",
    "positionBlock",
    "lightningWeights",
    "lightningNetwork",
    -- dimension
    "coefficientJacobian",
    "neurovarietyDimension",
    "dimensionRecord",
    "neurovariety",
    -- a user's own polynomial map
    "mapDimension",
    "mapFiber",
    -- fibers
    "fiberIdeal",
    "parametrizationFiber",
    "localFiberDimension",
    -- one-layer geometry
    "implicitModel",
    "implicitIdeal",
    "implicitCoordinates",
    "implicitRecord",
    "numericalDegree",
    "weightStrata",
    "singularRecord",
    "singularStrata",
    "criticalImage",
    "criticalLocus",
    "pointVerdict",
    -- degree and ED degree
    "degreeRecord",
    "neurovarietyDegree",
    "edDegreeRecord",
    "edDegree",
    "lagrangeIdeal",
    -- decision boundaries
    "decisionBoundary",
    "boundaryEDDegree",
    "boundaryCriticalPoints",
    "robustnessRadius",
    "boundaryPolynomialRecord",
    "boundaryEDRecord",
    "trainingCriticalPoints",
    "trainingRecord",
    "powerSumCriticalPoints",
    "powerSumAtInfinity",
    -- records
    "printRecord",
    "idealRecord",
    "geometryRecord",
    "criticalImageRecord",
    -- option names
    "Heads",
    "Value",
    "Out",
    "Causal",
    "Residual",
    "Bias",
    "Normalization",
    "Columns",
    "Generators",
    "WitnessTries",
    "OneCoordinate",
    "Reparametrize",
    "ComputeIdeal",
    "NumericalDegreeRuns",
    "MinorBudget",
    "SamplesPerPiece",
    "Directions",
    "SingularMethod",
    "CriticalLocus",
    "StrataClosures",
    "Metric",
    "MonodromyRepeats",
    "TargetCount",
    "Modulus",
    "Center",
    "NumericalRuns",
    "MaxPaths"
    }

-- The default prime of the Jacobian strategy: large, so that a random point is unlucky
-- (rank lower than the generic rank) with probability at most (degree - 1) * rank / p.
lcasDefaultPrime = 2147483629;

---------------------------------------------------------------------------------------------
-- CODE, in dependency order
---------------------------------------------------------------------------------------------
load "./LightningCAS/Networks.m2"
load "./LightningCAS/Dimension.m2"
load "./LightningCAS/Fibers.m2"
load "./LightningCAS/ImplicitModels.m2"
load "./LightningCAS/Singular.m2"
load "./LightningCAS/Slices.m2"
load "./LightningCAS/Verdicts.m2"
load "./LightningCAS/Records.m2"
load "./LightningCAS/Degrees.m2"
load "./LightningCAS/Decision.m2"
load "./LightningCAS/Results.m2"
load "./LightningCAS/Maps.m2"

---------------------------------------------------------------------------------------------
-- DOCUMENTATION
---------------------------------------------------------------------------------------------
beginDocumentation()

doc ///
    Key
        LightningCAS
    Headline
        neurovarieties of lightning self-attention networks
    Description
        Text
            This package implements the algebraic geometry of lightning self-attention networks
            studied in N. W. Henry, G. L. Marchetti and K. Kohn,
            {\em Geometry of Lightning Self-Attention: Identifiability and Dimension}, ICLR 2025
            (@HREF {"https://arxiv.org/abs/2408.17221", "arXiv:2408.17221"}@). It is part of the
            lightning_cas project, whose Python package calls these functions for every Macaulay2
            computation it makes and reads their records as JSON; the package works on its own too.

            A lightning self-attention layer with attention width $a$, input width $d$ and output
            width $e$ maps a token matrix $Y$ ($d \times t$, one column per token) to
            $V Y (Y^T K^T Q Y)$, with weights $Q, K$ ($a \times d$) and $V$ ($e \times d$). A network
            with widths $d_0, \ldots, d_L$ and attention widths $a_1, \ldots, a_L$ composes $L$
            such layers. With $h_i$ heads, layer $i$ is the sum over its heads of
            $V_{ih} Y (Y^T K_{ih}^T Q_{ih} Y)$.

            Beyond the paper, a network can be any stack of polynomial blocks (@TO neuralNetwork@):
            attention with several heads, a factored value map, a causal mask or a residual
            connection (@TO attentionBlock@), polynomial mlp blocks (@TO mlpBlock@), linear and
            entrywise power blocks (@TO linearBlock@, @TO powerBlock@). The paper's networks are the
            stacks of plain attention blocks, and every function takes either form.

            The output entries are polynomials in the weights and the tokens. Their coefficients
            (as polynomials in the tokens) parametrize the {\em neurovariety}: the closure of the
            set of functions the architecture computes. This package builds the network
            (@TO lightningNetwork@), computes the dimension of the neurovariety
            (@TO neurovarietyDimension@: a Jacobian rank at a random point, or exactly by
            implicitization), and the fiber of the parametrization through a weight point
            (@TO parametrizationFiber@). For one layer it computes the implicit ideal
            (@TO implicitModel@, @TO implicitIdeal@), the singular locus (@TO singularStrata@),
            the critical locus of the parametrization (@TO criticalLocus@) and the data of real
            verdicts at a point (@TO pointVerdict@). Records of the computations can be printed as JSON
            (@TO printRecord@), which is how the Python package lightning_cas reads them; in a
            session, @TO neurovariety@ gives the same computation as one object with a readable
            summary (@TO NeurovarietyResult@). The dimension and the fibers of a polynomial map of
            your own are @TO mapDimension@ and @TO mapFiber@.

            The weights are ordered layer by layer and, inside a layer, head by head: the entries
            of $Q$, then $K$, then $V$, each row by row (@TO lightningWeights@).
        Example
            neurovarietyDimension({3,3,3}, {2,2}, 2)
            neurovarietyDimension({2,2}, {1}, 2, Strategy => "Implicit")
            neurovarietyDimension neuralNetwork(2, 2, {attentionBlock(1, Causal => true, Residual => true), mlpBlock 2})
        Text
            @HEADER3 "References"@

            N. W. Henry, G. L. Marchetti, K. Kohn. Geometry of Lightning Self-Attention:
            Identifiability and Dimension. International Conference on Learning Representations
            (ICLR), 2025. @HREF {"https://arxiv.org/abs/2408.17221", "arXiv:2408.17221"}@.
    Subnodes
        :The network
        NeuralNetwork
        neuralNetwork
        NetworkBlock
        attentionBlock
        mlpBlock
        linearBlock
        powerBlock
        positionBlock
        lightningWeights
        lightningNetwork
        :Dimension
        NeurovarietyResult
        neurovariety
        neurovarietyDimension
        dimensionRecord
        coefficientJacobian
        :A polynomial map of your own
        mapDimension
        mapFiber
        :Fibers
        fiberIdeal
        parametrizationFiber
        localFiberDimension
        :One-layer geometry
        ImplicitModel
        implicitModel
        implicitIdeal
        implicitCoordinates
        implicitRecord
        numericalDegree
        weightStrata
        (singularLocus, ImplicitModel)
        singularRecord
        singularStrata
        criticalImage
        criticalLocus
        pointVerdict
        :Degree and ED degree
        degreeRecord
        neurovarietyDegree
        edDegreeRecord
        edDegree
        lagrangeIdeal
        :Decision boundaries and training
        decisionBoundary
        boundaryEDDegree
        boundaryCriticalPoints
        robustnessRadius
        boundaryPolynomialRecord
        boundaryEDRecord
        powerSumCriticalPoints
        trainingCriticalPoints
        :Records
        printRecord
        idealRecord
        geometryRecord
        criticalImageRecord
        :Options
        Heads
        Columns
        Generators
        WitnessTries
        OneCoordinate
        Reparametrize
        ComputeIdeal
        NumericalDegreeRuns
        MinorBudget
        SamplesPerPiece
        Directions
        Metric
        MonodromyRepeats
        TargetCount
///

load "./LightningCAS/NetworksDocumentation.m2"
load "./LightningCAS/DimensionDocumentation.m2"
load "./LightningCAS/FibersDocumentation.m2"
load "./LightningCAS/ImplicitModelsDocumentation.m2"
load "./LightningCAS/SingularDocumentation.m2"
load "./LightningCAS/SlicesDocumentation.m2"
load "./LightningCAS/VerdictsDocumentation.m2"
load "./LightningCAS/RecordsDocumentation.m2"
load "./LightningCAS/DegreesDocumentation.m2"
load "./LightningCAS/DecisionDocumentation.m2"
load "./LightningCAS/ResultsDocumentation.m2"
load "./LightningCAS/MapsDocumentation.m2"

---------------------------------------------------------------------------------------------
-- TESTS
---------------------------------------------------------------------------------------------
load "./LightningCAS/Tests.m2"

end--

restart
loadPackage("LightningCAS", FileName => "m2/LightningCAS.m2", Reload => true)
check "LightningCAS"
