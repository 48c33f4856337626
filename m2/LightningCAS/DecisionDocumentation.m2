doc ///
    Key
        decisionBoundary
        (decisionBoundary, NeuralNetwork, List, List)
        [decisionBoundary, CoefficientRing]
    Headline
        the polynomial of a decision boundary
    Usage
        decisionBoundary(N, weights, readout)
    Inputs
        N:NeuralNetwork
        weights:List
            the flat weights (rationals), in the order of @TO lightningWeights@
        readout:List
            a $d_L \times t$ list of rationals $w$
        CoefficientRing => Ring
            the coefficients of the polynomial
    Outputs
        :RingElement
            $g(X) = \sum_{ij} w_{ij} f_W(X)_{ij}$ in the input coordinates $x_{(r,j)}$ over QQ; the decision
            boundary is $\{g = 0\}$
    Description
        Example
            decisionBoundary(neuralNetwork(2, 1, {linearBlock 2, powerBlock 2, linearBlock 1}), {1,0,0,1,1,-1}, {{1}})
///

doc ///
    Key
        boundaryEDDegree
        (boundaryEDDegree, RingElement)
        [boundaryEDDegree, Modulus]
        Modulus
    Headline
        the ED degree of a hypersurface, exactly mod a prime
    Usage
        boundaryEDDegree g
    Inputs
        g:RingElement
            over QQ; the hypersurface is taken reduced
        Modulus => ZZ
            the prime
    Outputs
        :ZZ
            the degree of $(g) + $ the 2-minors of $[x - u \mid \nabla g]$, saturated by $(\nabla g)$, for a
            random $u$ over ZZ/p: the number of critical points of $|x - u|^2$ on the smooth locus
    Description
        Text
            A generic cubic cone in four variables has 21; the decision boundary of one layer with
            $(d, d', a, t) = (2, 1, 2, 2)$ has 12.
        Example
            R = QQ[a,b,c]; boundaryEDDegree(a^3 + 2*b^3 - c^3 + a*b*c + a^2*c)
///

doc ///
    Key
        boundaryCriticalPoints
        (boundaryCriticalPoints, RingElement)
        [boundaryCriticalPoints, Center]
        Center
    Headline
        the critical points of the distance to a hypersurface, by homotopy
    Usage
        boundaryCriticalPoints g
    Inputs
        g:RingElement
        Center => List
            the point $u$ (default: random complex)
    Outputs
        :List
            the distinct regular solutions $(x, \lambda)$ of $x - u = \lambda \nabla g$, $g = 0$ (total-degree
            homotopy, the union of runs until two in a row add nothing): a lower bound of the ED degree
    Description
        Example
            R = QQ[a,b]; #boundaryCriticalPoints(a^2 - b^2)
///

doc ///
    Key
        robustnessRadius
        (robustnessRadius, RingElement, List)
    Headline
        the real critical points of the distance from a point to a hypersurface
    Usage
        robustnessRadius(g, X0)
    Inputs
        g:RingElement
        X0:List
            rationals
    Outputs
        :HashTable
            the homotopy solutions at $X0$, each alpha-certified in exact arithmetic over the Gaussian
            rationals (a true solution within $2\beta$; real, or non-real), the degree of the exact critical
            ideal at $X0$, the univariate eliminant of the squared distance, and the components of the
            singular locus over QQ (a linear one with its nearest point, exactly)
    Description
        Example
            R = QQ[a,b]; r = robustnessRadius(a^2 - b^2, {2, 1/2}); r#"exact_count"
///

doc ///
    Key
        boundaryPolynomialRecord
        (boundaryPolynomialRecord, NeuralNetwork, List, List)
    Headline
        the decision polynomial before any count
    Usage
        boundaryPolynomialRecord(N, weights, readout)
    Inputs
        N:NeuralNetwork
        weights:List
        readout:List
    Outputs
        :HashTable
            {\tt "zero"} and {\tt "constant"} (no boundary), and the coefficients over QQ of the squarefree
            part of $g$: the exact count of @TO boundaryEDRecord@ reduces them mod its prime, so lightning_cas
            chooses a prime that divides none of them (nor the weights, the readout or the point)
    Description
        Example
            boundaryPolynomialRecord(neuralNetwork(2, 1, {linearBlock 2, powerBlock 2, linearBlock 1}), {1,0,1,1,16001,16002}, {{1}})
///

doc ///
    Key
        boundaryEDRecord
        (boundaryEDRecord, NeuralNetwork, List, List, List)
        [boundaryEDRecord, Modulus]
        [boundaryEDRecord, NumericalRuns]
        NumericalRuns
    Headline
        the record of a decision-boundary run
    Usage
        boundaryEDRecord(N, weights, readout, X0)
    Inputs
        N:NeuralNetwork
        weights:List
        readout:List
        X0:List
            the input point, or the empty list
        Modulus => ZZ
            the prime of the exact count
        NumericalRuns => ZZ
            homotopy counts, each a union of runs
    Outputs
        :HashTable
            what lightning_cas reads: the polynomial, the exact and the homotopy counts, and with a point
            @TO robustnessRadius@, or, when the point lies on the boundary (g(X0) = 0 over QQ), only
            {\tt "on_boundary"} and {\tt "singular_point"}: the radius is 0, nothing is solved
///

doc ///
    Key
        trainingCriticalPoints
        (trainingCriticalPoints, NeuralNetwork, List, List)
        trainingRecord
        (trainingRecord, NeuralNetwork, List, List)
        [trainingCriticalPoints, MaxPaths]
        [trainingRecord, MaxPaths]
        MaxPaths
    Headline
        critical points of the squared loss of a data set on the function space
    Usage
        trainingCriticalPoints(N, inputs, targets)
    Inputs
        N:NeuralNetwork
        inputs:List
            token matrices $X_n$ ($d_0 \times t$)
        targets:List
            matrices $Y_n$ ($d_L \times t$)
        MaxPaths => Number
            refuse (the record says {\tt too_large}) beyond this many homotopy paths
    Outputs
        :HashTable
            the dimension $r$ of the values $z = (f(X_n))_n$, and per regular solution of the critical
            equations on a coordinate gauge slice of dimension $r$: the slice point, the weights, $z$,
            $dz/ds$ and the Hessian of the loss
    Description
        Text
            A linear network $3 \to 1 \to 2$ with inputs $e_1, e_2, e_3$ has the losses of Eckart and Young.
        Example
            r = trainingCriticalPoints(neuralNetwork(3, 1, {linearBlock 1, linearBlock 2}), {{{1},{0},{0}}, {{0},{1},{0}}, {{0},{0},{1}}}, {{{3},{1}}, {{1},{2}}, {{0},{-1}}});
            r#"rank"
///

doc ///
    Key
        powerSumCriticalPoints
        (powerSumCriticalPoints, List, ZZ, List, List)
        [powerSumCriticalPoints, TargetCount]
        [powerSumCriticalPoints, MonodromyRepeats]
        powerSumAtInfinity
        (powerSumAtInfinity, List, ZZ, List)
    Headline
        critical points of the distance to a translated power sum (a one-hidden-layer decision boundary)
    Usage
        powerSumCriticalPoints(c, d, S, targets)
        powerSumAtInfinity(c, d, S)
    Inputs
        c:List
            the coefficients $c_j$ of $h = \sum_j c_j w_j^d + e$
        d:ZZ
            the power
        S:List
            a symmetric $k \times k$ matrix: the distance is $(w - u)^T S^{-1} (w - u)$
        targets:List
            parameter points $\{u_1, \dots, u_k, e\}$
        TargetCount => ZZ
            stop the monodromy at this many solutions (a bound proved by the caller)
        MonodromyRepeats => ZZ
            stop after this many loops without a new solution
    Outputs
        :HashTable
            the monodromy's count and time, and for each target the status and coordinates $(w, l)$ of every
            solution of $h = 0$, $w - u = l S \nabla h$ (as pairs of decimal strings); {\tt powerSumAtInfinity}:
            every solution of $v = S\,\mathrm{diag}(c)\,v^{d-1}$
    Description
        Text
            The solutions of the family over $(u, e)$ form a graph over $(w, l)$, so monodromy in $(u, e)$ reaches
            all of them; the Python side certifies each (Krawczyk) and proves the count complete.
        Example
            r = powerSumCriticalPoints({1, -2}, 3, {{2, 1}, {1, 3}}, {{1, 2, 5}}, TargetCount => 9);
            r#"found"
///
