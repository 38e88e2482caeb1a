module fleetglass.local/testbed/flux/fluxserve

go 1.26.0
